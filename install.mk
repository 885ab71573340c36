# SPDX-License-Identifier: MIT
# install.mk: `make install`, `make uninstall` and `make test-install`. Included by the top-level Makefile,
# which defines CC, CFLAGS, LUA, BUILD, RUNTIME_SRC and RUNTIME_HDR.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=]   build libattngen.a from $(RUNTIME_SRC), then install
#       $(PREFIX)/bin/attngen                         the generator command (runs lua5.4, or luajit, on
#                                                     share/attngen/gen/attngen.lua; works from any directory)
#       $(PREFIX)/share/attngen/{gen,templates}/      the generator's modules and templates
#       $(PREFIX)/share/attngen/tools/tune/           the tuning tool behind `attngen --tune`
#       $(PREFIX)/share/attngen/runtime/              the runtime sources and headers, for vendoring
#       $(PREFIX)/lib/libattngen.a                    the runtime and the generic kernels
#       $(PREFIX)/include/attngen/                    $(RUNTIME_HDR) (attngen.h, attngen_kernel.h, attngen_convert.h, ...)
#       $(PREFIX)/lib/pkgconfig/attngen.pc            pkg-config --cflags --libs attngen
#       $(PREFIX)/lib/cmake/attngen/                  find_package(attngen): attngen::runtime, attngen_generate()
#       $(PREFIX)/share/attngen/install_manifest.txt  every file installed, for uninstall
#   make uninstall [PREFIX=...] [DESTDIR=...]       remove exactly the files in that manifest
#   make test-install                               tests/test_install.sh: install into a temporary prefix, build
#                                                   a project with CMake and with pkg-config, run, uninstall
#
# The work is in tools/install.sh; the templates of the command and the packages are in packaging/.
# INSTALL_CFLAGS (default: $(CFLAGS) -fPIC) compiles the library; -std=c99 is always added.

PREFIX  ?= /usr/local
DESTDIR ?=
AR      ?= ar
INSTALL_CFLAGS ?= $(CFLAGS) -fPIC
INSTALL_BUILD  := $(BUILD)/install
INSTALL_LIB    := $(INSTALL_BUILD)/libattngen.a
INSTALL_INC    := $(addprefix -I,$(sort $(patsubst %/,%,$(dir $(RUNTIME_HDR)))))
INSTALL_OBJS   := $(addprefix $(INSTALL_BUILD)/obj/,$(notdir $(RUNTIME_SRC:.c=.o)))

.PHONY: install uninstall test-install

define install_obj_rule
$(INSTALL_BUILD)/obj/$(notdir $(1:.c=.o)): $(1) $(RUNTIME_HDR) install.mk
	@mkdir -p $$(@D)
	$$(CC) -std=c99 $$(INSTALL_CFLAGS) $(INSTALL_INC) -c $$< -o $$@
endef
$(foreach s,$(RUNTIME_SRC),$(eval $(call install_obj_rule,$(s))))

$(INSTALL_LIB): $(INSTALL_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

install: $(INSTALL_LIB)
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' LUA='$(LUA)' LIB='$(INSTALL_LIB)' \
	  RUNTIME_SRC='$(RUNTIME_SRC)' RUNTIME_HDR='$(RUNTIME_HDR)' sh tools/install.sh install

uninstall:
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' sh tools/install.sh uninstall

test-install: deps-test
	@MAKE='$(MAKE)' CC='$(CC)' LUA='$(LUA)' sh tests/test_install.sh

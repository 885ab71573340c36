# SPDX-License-Identifier: MIT
# install.mk: `make install`, `make uninstall` and `make test-install`. Included by the top-level Makefile,
# which defines CC, CFLAGS, LUA, BUILD, RUNTIME_SRC and RUNTIME_HDR.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=]   build libattngen.a and libattngen.so from $(RUNTIME_SRC), then install
#       $(PREFIX)/bin/attngen                         the generator command (runs lua5.4, or luajit, on
#                                                     share/attngen/gen/attngen.lua; works from any directory)
#       $(PREFIX)/share/attngen/{gen,templates}/      the generator's modules and templates
#       $(PREFIX)/share/attngen/tools/tune/           the tuning tool behind `attngen --tune`
#       $(PREFIX)/share/attngen/runtime/              the runtime sources and headers, for vendoring
#       $(PREFIX)/lib/libattngen.a                    the runtime and the generic kernels
#       $(PREFIX)/lib/libattngen.so.<version>         the same as a shared library, with its soname link
#                                                     (libattngen.so.<soversion>) and libattngen.so for -lattngen
#       $(PREFIX)/include/attngen/                    $(RUNTIME_HDR) (attngen.h, attngen_kernel.h, attngen_convert.h, ...)
#       $(PREFIX)/lib/pkgconfig/attngen.pc            pkg-config --cflags --libs attngen
#       $(PREFIX)/lib/cmake/attngen/                  find_package(attngen): attngen::runtime (static),
#                                                     attngen::runtime_shared, attngen_generate()
#       $(PREFIX)/share/doc/attngen/                  README.md, CHANGELOG.md, LICENSE, docs/*.md
#       $(PREFIX)/share/attngen/install_manifest.txt  every file installed and every directory install created
#   make uninstall [PREFIX=...] [DESTDIR=...]       remove exactly the files in that manifest, then the directories
#                                                   it lists once they are empty
#   make test-install                               tests/test_install.sh: install into a temporary prefix, build
#                                                   a project with CMake and with pkg-config, run, uninstall
#
# The work is in tools/install.sh; the templates of the command and the packages are in packaging/.
# INSTALL_CFLAGS (default: $(CFLAGS) -fPIC) compiles both libraries (so it must keep -fPIC); -std=c99 is always
# added. INSTALL_LDFLAGS is added to the shared library's link.
# The soname carries the major version, and the minor one too while the major version is 0 (0.x releases may
# change the ABI): libattngen.so.0.2 for 0.2.x.

PREFIX  ?= /usr/local
DESTDIR ?=
AR      ?= ar
INSTALL_CFLAGS ?= $(CFLAGS) -fPIC
INSTALL_BUILD  := $(BUILD)/install
INSTALL_LIB    := $(INSTALL_BUILD)/libattngen.a
INSTALL_INC    := $(addprefix -I,$(sort $(patsubst %/,%,$(dir $(RUNTIME_HDR)))))
INSTALL_OBJS   := $(addprefix $(INSTALL_BUILD)/obj/,$(notdir $(RUNTIME_SRC:.c=.o)))
INSTALL_LDFLAGS ?=
ATTNGEN_VERSION   := $(shell sed -n 's/^return "\([0-9][0-9.]*\)".*/\1/p' gen/version.lua)
ATTNGEN_SOVERSION := $(shell echo '$(ATTNGEN_VERSION)' | sed 's/^\(0\.[0-9]*\).*/\1/; s/^\([1-9][0-9]*\)\..*/\1/')
INSTALL_SONAME := libattngen.so.$(ATTNGEN_SOVERSION)
INSTALL_SHLIB  := $(INSTALL_BUILD)/libattngen.so.$(ATTNGEN_VERSION)

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

$(INSTALL_SHLIB): $(INSTALL_OBJS)
	$(CC) -shared -Wl,-soname,$(INSTALL_SONAME) $(INSTALL_LDFLAGS) $^ -lm -pthread -o $@

install: $(INSTALL_LIB) $(INSTALL_SHLIB)
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' LUA='$(LUA)' LIB='$(INSTALL_LIB)' \
	  SHLIB='$(INSTALL_SHLIB)' SONAME='$(INSTALL_SONAME)' \
	  RUNTIME_SRC='$(RUNTIME_SRC)' RUNTIME_HDR='$(RUNTIME_HDR)' sh tools/install.sh install

uninstall:
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' sh tools/install.sh uninstall

test-install: deps-test
	@MAKE='$(MAKE)' CC='$(CC)' LUA='$(LUA)' sh tests/test_install.sh

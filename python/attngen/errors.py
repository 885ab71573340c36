# SPDX-License-Identifier: MIT
"""attngen.Error: every failure of the package, with the runtime's status and message when the runtime refused."""
from . import _abi


class Error(Exception):
    """A refused call. status: the attngen_status value (negative), or None for a failure outside the runtime
    (library not found, generator or compiler failed); code: its C name ("ATTNGEN_ERR_SHAPE"); status_name: the
    runtime's attngen_status_name ("shape does not match the kernel"); message: what went wrong, for a runtime
    refusal the runtime's attngen_last_error()."""

    def __init__(self, message, status=None, status_name=None):
        self.message, self.status = message, status
        self.code = _abi.STATUS_CODES.get(status) if status is not None else None
        self.status_name = status_name
        super().__init__(f"{self.code} ({status_name}): {message}" if self.code else message)


class LibraryNotFound(Error):
    """No libattngen.so where the package looked (the message lists the places)."""


class BuildError(Error):
    """The generator or the C compiler failed (the message has its output)."""


def check(lib, status, what):
    """Raises Error for a non-zero status of the runtime call `what`, with attngen_last_error()'s message."""
    if status != 0:
        message = lib.attngen_last_error().decode(errors="replace") or what + " failed"
        raise Error(message, status, lib.attngen_status_name(status).decode())


def refuse(status_code, message):
    """An argument refused on the Python side, before any C call, with the status the runtime would have given
    (named by the runtime once it is loaded)."""
    from . import _library
    status = _abi.CONSTANTS[status_code]
    lib = _library.loaded()
    return Error(message, status, lib.attngen_status_name(status).decode() if lib else status_code)

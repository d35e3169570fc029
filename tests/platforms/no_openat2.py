"""Run a command with openat2 (syscall 437) answering ENOSYS, for it and every child.

    python tests/platforms/no_openat2.py CMD [ARG...]

What this emulates: a kernel older than 5.6, or a sandbox (some container
runtimes, gVisor) that refuses openat2 — and, with an empty /proc on top
(tests/platforms/test_macos_like.py), the part of macOS that matters to the
read path: no openat2 and no /proc. Lantern's jail must then walk each path one
component at a time with O_NOFOLLOW.

How: PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP with a four-instruction classic
BPF filter. The filter checks the audit architecture first (x86_64 or aarch64,
the one this interpreter runs on); for any other architecture — e.g. a 32-bit
call into an x86_64 kernel — it allows the call untouched. On the right
architecture it answers ENOSYS to syscall 437 (with x86_64's x32 bit masked
off, so the x32 entry point is closed too) and allows everything else. A
seccomp filter survives fork and execve and cannot be removed, so every child
and grandchild of CMD inherits it. Then CMD is exec'ed in place of this
process (same pid).

What it does not show: the real macOS or Windows kernel; only that Lantern's
fallback is taken in a real process tree, not through an in-process switch.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys

SYS_OPENAT2 = 437  # the same number on every Linux architecture

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_X32_SYSCALL_BIT = 0x40000000

# <linux/audit.h>: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "arm64": 0xC00000B7}

# classic BPF opcodes (<linux/filter.h>)
_BPF_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
_BPF_JEQ_K = 0x05 | 0x10 | 0x00  # BPF_JMP | BPF_JEQ | BPF_K
_BPF_AND_K = 0x04 | 0x50 | 0x00  # BPF_ALU | BPF_AND | BPF_K
_BPF_RET_K = 0x06 | 0x00  # BPF_RET | BPF_K

# struct seccomp_data: int nr; __u32 arch; ...
_OFFSET_NR = 0
_OFFSET_ARCH = 4


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [
        ("len", ctypes.c_ushort),
        ("filter", ctypes.POINTER(_SockFilter)),
    ]


def program(arch: int) -> list[tuple[int, int, int, int]]:
    """The filter, as (code, jt, jf, k); jumps count instructions skipped."""
    return [
        (_BPF_LD_W_ABS, 0, 0, _OFFSET_ARCH),
        (_BPF_JEQ_K, 0, 4, arch),  # another architecture: allow (index 6)
        (_BPF_LD_W_ABS, 0, 0, _OFFSET_NR),
        (_BPF_AND_K, 0, 0, 0xFFFFFFFF & ~_X32_SYSCALL_BIT),
        (_BPF_JEQ_K, 0, 1, SYS_OPENAT2),
        (_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | errno.ENOSYS),
        (_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
    ]


def install() -> None:
    """Install the filter on this process (and so on everything it starts from now on)."""
    if not sys.platform.startswith("linux"):
        raise OSError(errno.ENOSYS, "seccomp is Linux only")
    machine = platform.machine()
    arch = AUDIT_ARCH.get(machine)
    if arch is None:
        raise OSError(errno.ENOSYS, f"no audit architecture known for {machine!r}")
    steps = program(arch)
    filters = (_SockFilter * len(steps))(*(_SockFilter(*step) for step in steps))
    prog = _SockFprog(len(steps), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"PR_SET_NO_NEW_PRIVS: {os.strerror(err)}")
    if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"PR_SET_SECCOMP: {os.strerror(err)}")


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python tests/platforms/no_openat2.py CMD [ARG...]", file=sys.stderr)
        return 2
    try:
        install()
    except OSError as exc:
        print(f"no_openat2: cannot install the seccomp filter: {exc}", file=sys.stderr)
        return 3
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"no_openat2: cannot run {argv[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    raise AssertionError("unreachable")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

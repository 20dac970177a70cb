"""Run a command under the network rules of systemd/companion.service, as far
as a test machine without systemd as PID 1 can: run it inside ``unshare -n``
(a fresh network namespace, loopback up) as

    python tests/unit_sandbox.py AF_UNIX,AF_NETLINK,... [NOFILE] -- COMMAND...

It installs the seccomp filter systemd builds for ``RestrictAddressFamilies=``
— ``socket()`` with any other family fails with EAFNOSUPPORT, as under the
unit — with no_new_privs (``NoNewPrivileges=yes``) and, given NOFILE, the
descriptor limit (``LimitNOFILE=``), then execs COMMAND, which inherits
them.  Only the standard library: it runs before the command.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import socket
import subprocess
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
NR, ARCH, ARG0 = 0, 4, 16
# (audit arch, socket's syscall number) per machine this runs on
ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def socket_filter(families: list[int], arch: int, nr_socket: int) -> list[tuple[int, int, int, int]]:
    """The BPF program: another architecture's calls and any call but
    ``socket()`` pass; ``socket()`` passes with one of ``families``, else
    fails with EAFNOSUPPORT (systemd's answer to a family it restricts)."""
    n = len(families)
    prog = [(BPF_LD_W_ABS, 0, 0, ARCH),
            (BPF_JEQ_K, 0, n + 4, arch),  # not ours: allow (the last instruction)
            (BPF_LD_W_ABS, 0, 0, NR),
            (BPF_JEQ_K, 0, n + 2, nr_socket),  # not socket(): allow
            (BPF_LD_W_ABS, 0, 0, ARG0)]
    for i, fam in enumerate(families):
        prog.append((BPF_JEQ_K, n - i, 0, fam))  # a match jumps to allow
    prog.append((BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | 97))  # EAFNOSUPPORT
    prog.append((BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return prog


def restrict_families(names: list[str]) -> None:
    arch, nr_socket = ARCHES[platform.machine()]
    families = [int(getattr(socket, name)) for name in names]
    prog = socket_filter(families, arch, nr_socket)
    insns = (SockFilter * len(prog))(*[SockFilter(*i) for i in prog])
    fprog = SockFprog(len(prog), insns)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p), 0, 0):
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def main(argv: list[str]) -> None:
    sep = argv.index("--")
    names, command = argv[0].split(","), argv[sep + 1:]
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)  # a fresh namespace's loopback is down
    if sep > 1:
        resource.setrlimit(resource.RLIMIT_NOFILE, (int(argv[1]), int(argv[1])))
    restrict_families(names)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])

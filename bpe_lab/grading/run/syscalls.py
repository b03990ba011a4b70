"""What a grading kernel may ask of the Linux kernel: a seccomp allow-list.

What this adds over ``jail`` (namespaces, binds, no capability): a bound
on the kernel's own interface. Namespaces hide the machine, but every
system call still reaches the host's Linux kernel, and some of them are
its largest attack surface or hold memory no budget sees (io_uring,
userfaultfd, keyctl, memfd_secret, landlock, bpf, perf_event_open, ...).
So the kernel's processes may make only the calls listed in ``ALLOWED``;
any other is refused with ``EPERM`` (``clone3`` with ``ENOSYS``, so that
glibc falls back to ``clone``, as Docker's default profile does), and a
call made in another architecture's convention (``int 0x80``, x32) kills
the process. Sockets are of four families only (``SOCKET_FAMILIES``), and
setting a socket's buffer sizes (``SO_SNDBUF``, ``SO_RCVBUF`` and their
``FORCE`` forms) is refused: 64 unix socket pairs with raised buffers
queued more than a gigabyte of the machine's memory that no process's
resident memory showed.

The filter is compiled by libseccomp (``pyseccomp``, ctypes over the
system's ``libseccomp.so.2``), once per grader, into BPF programs that
``launch`` hands to bubblewrap (``bwrap --add-seccomp-fd FD``), which
loads them with ``no_new_privs`` as the last step before it runs the
kernel: every process in the sandbox has them, and none can lift them. Where libseccomp
is missing, ``unavailable`` says so and ``jail`` refuses to grade.

How ``ALLOWED`` was found: every solution and every released exercise
graded with ``strace -f`` inside each kernel's sandbox (every system call
a kernel, its threads and what it started made: CPython, ipykernel, zmq,
numpy, regex, matplotlib, the package), plus the calls of the same family
a different libc, Python or load may use instead (``statx`` beside
``newfstatat``, ``ppoll`` beside ``poll``, ``clone`` beside ``clone3``,
``wait4`` and ``kill`` for ``subprocess``, ``memfd_create`` whose memory
the budget counts). Nothing that reaches past its own processes and
folders is on it: no mount, namespace, key, trace, BPF program, module,
or setting of the Linux kernel.
"""

from __future__ import annotations

import errno
import functools
import tempfile
from typing import Any

__all__ = ["ALLOWED", "SOCKET_FAMILIES", "REFUSED_SOCKET_OPTIONS", "unavailable", "program"]

#: Every system call a kernel may make (x86_64 names; a name the machine's
#: architecture does not have is skipped).
ALLOWED = (
    # files and folders, in the folders the sandbox gives
    "access", "faccessat", "faccessat2", "open", "openat", "openat2", "creat", "close", "close_range",
    "read", "readv", "pread64", "preadv", "preadv2", "write", "writev", "pwrite64", "pwritev", "pwritev2",
    "lseek", "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
    "getdents64", "getcwd", "chdir", "fchdir", "readlink", "readlinkat", "mkdir", "mkdirat", "rmdir",
    "rename", "renameat", "renameat2", "unlink", "unlinkat", "link", "linkat", "symlink", "symlinkat",
    "chmod", "fchmod", "fchmodat", "truncate", "ftruncate", "fsync", "fdatasync", "flock", "fcntl",
    "dup", "dup2", "dup3", "pipe", "pipe2", "sendfile", "copy_file_range", "fadvise64", "fallocate",
    "utimensat", "umask", "ioctl", "getxattr", "lgetxattr", "fgetxattr",
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "mbind", "get_mempolicy",
    "set_mempolicy", "mlock", "munlock", "memfd_create", "msync",
    # processes and threads (how many: the budget and the pids cgroup)
    "execve", "execveat", "clone", "fork", "vfork", "exit", "exit_group", "wait4", "waitid",
    "kill", "tgkill", "tkill", "getpid", "getppid", "gettid", "getpgrp", "getpgid", "setpgid", "getsid",
    "setsid", "set_tid_address", "set_robust_list", "get_robust_list", "rseq", "arch_prctl", "prctl",
    "futex", "futex_waitv", "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
    "sched_setparam", "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
    "sched_get_priority_min", "getpriority", "setpriority", "prlimit64", "getrlimit", "setrlimit",
    "getrusage", "times", "pidfd_open", "pidfd_send_signal",
    # signals
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_sigqueueinfo",
    "sigaltstack", "pause", "alarm", "setitimer", "getitimer",
    # who it is (it cannot change it: no capability)
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "uname", "sysinfo",
    "getcpu", "getrandom",
    # time
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
    "timerfd_create", "timerfd_settime", "timerfd_gettime",
    # waiting on files and sockets
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
    # sockets: unix sockets to the grader (the network namespace has no other)
    "socket", "socketpair", "bind", "listen", "accept", "accept4", "connect", "shutdown",
    "getsockname", "getpeername", "getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg",
    "sendmmsg", "recvmmsg",
)  # fmt: skip

#: Calls refused with ENOSYS rather than EPERM: their callers fall back to an older call on the list.
FALLBACK = ("clone3",)

#: The socket families a kernel may open: unix sockets (zmq's to the
#: grader, socketpair), IP ones (which find no network in the sandbox) and
#: netlink (glibc asks it which addresses there are); never AF_PACKET,
#: AF_ALG, AF_VSOCK, ... (the Linux kernel's code for each is attack surface).
SOCKET_FAMILIES = (1, 2, 10, 16)  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
_SOL_SOCKET = 1
_INT = 0xFFFFFFFF
#: ``SOL_SOCKET`` options a kernel may not set: a socket's send and receive
#: buffer sizes (``SO_SNDBUF``, ``SO_RCVBUF``, ``SO_SNDBUFFORCE``, ``SO_RCVBUFFORCE``).
REFUSED_SOCKET_OPTIONS = (7, 8, 32, 33)


def _library() -> Any:
    import pyseccomp

    return pyseccomp


def unavailable() -> str:
    """Why no seccomp filter can be made here ("" when one can)."""
    try:
        _compiled()
    except (ImportError, RuntimeError, OSError) as err:
        return (
            f"no seccomp filter can be made here ({type(err).__name__}: {err}): install libseccomp "
            "(apt-get install libseccomp2) and pyseccomp (pip install pyseccomp)"
        )
    return ""


def program() -> tuple[bytes, ...]:
    """The allow-list as BPF programs for ``bwrap --add-seccomp-fd`` (each
    loaded on top of the other: a call must pass both); raises
    ``RuntimeError``, ``ImportError`` or ``OSError`` where libseccomp is missing."""
    return _compiled()


def _exported(rules: Any) -> bytes:
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.cache
def _compiled() -> tuple[bytes, ...]:
    """Two filters: the allow-list (anything else ``EPERM``), and the
    refused socket options (everything else allowed). libseccomp keeps
    only the unconditional rule of a call that has both, and the kernel
    applies every filter loaded, the strictest answer winning: so the
    second refuses what the first lets through."""
    seccomp = _library()
    allowed = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))
    options = seccomp.SyscallFilter(seccomp.ALLOW)
    for rules in (allowed, options):
        rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)  # another architecture's convention
        rules.set_attr(seccomp.Attr.CTL_NNP, 1)
    for name in ALLOWED:
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) < 0:  # not a call of this architecture
            continue
        if name in ("socket", "socketpair"):  # of the families it needs only: the arguments are ints
            for family in SOCKET_FAMILIES:
                allowed.add_rule(seccomp.ALLOW, name, seccomp.Arg(0, seccomp.MASKED_EQ, _INT, family))
        else:
            allowed.add_rule(seccomp.ALLOW, name)
    for name in FALLBACK:
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0:
            allowed.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
    for option in REFUSED_SOCKET_OPTIONS:  # the arguments are ints: only their low 32 bits count
        level = seccomp.Arg(1, seccomp.MASKED_EQ, _INT, _SOL_SOCKET)
        name = seccomp.Arg(2, seccomp.MASKED_EQ, _INT, option)
        options.add_rule(seccomp.ERRNO(errno.EPERM), "setsockopt", level, name)
    return _exported(allowed), _exported(options)

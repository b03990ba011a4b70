"""Run: a submission's cells in a kernel of its own, walled and limited.

What this stage adds over ``authoring`` and ``intake`` (what should run,
and what was handed in): running it where it can harm nothing.
``assembly`` puts a submission's cells with the solution's locked ones;
``kernel_package``, ``reach`` and ``stubs`` write the ``bpe_lab`` its
kernel sees; ``jail`` (whose docstring holds the threat model),
``distributions`` and ``syscalls`` build the bubblewrap walls and the
seccomp filter from allow-lists; ``sandbox``, ``launch``, ``wire``,
``budget``, ``cgroups`` and ``reaper`` start the kernel, bound what it
sends, what it uses and what it leaves; ``probe`` and ``visible`` bring
back its values as plain data, through ``in_kernel``, the module the
kernel runs for them.
"""

"""``make bench`` (``bpe-lab bench``): how fast and how big each BPE path is,
measured side by side in one run.

Absolute seconds mean little on a shared machine; ratios measured in the
same run, under the same load, mean more. So every row sets bpe_lab beside
a reference (the textbook trainer, Hugging Face ``tokenizers``, tiktoken,
``regex``), and the method is the same everywhere:

- each contender is timed **best of N, taking turns** (ours, theirs, ours,
  theirs, …), so a burst of load from other processes hits both alike
  (``timing``); a cache never carries over from one timed run to the next
  (each run gets a fresh tokenizer, built before the clock starts);
- the **corpus is named**, with its document count and the spread of the
  document sizes, and the machine's cores and load are printed beside it
  (``corpus``);
- a big contender runs **in a fresh process**, so its peak memory, summed
  over its worker processes, is its own (``runs``).

The modules, one benchmark idea each: ``sizes`` (how big each case is, and
``--quick``), ``table`` (a row, the Markdown table), ``timing``, ``corpus``,
``runs``; the cases: ``training`` (textbook vs incremental trainer,
``train_bytelevel`` vs HF, the small case), ``encoding`` (``Tokenizer`` vs
tiktoken and HF, ``encode_file`` on 1 and 2 workers vs tiktoken's batch),
``pretokenizers`` (one row per pattern of ``core.patterns.PATTERNS``),
``growth`` (training as the corpus grows, log-log slopes), ``grading`` (the
grader at class scale, ``--grading N``); ``command`` runs them in order and
registers ``bpe-lab bench``.
"""

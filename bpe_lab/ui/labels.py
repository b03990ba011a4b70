"""Every word the widgets show, in one dict per language: English and Chinese.

The bottom of the interface layer: plain strings, imported by ``views`` and
``widgets`` and importing nothing of the package.

Much of the source material, and many learners, are Chinese-speaking, so each
widget takes ``lang="en"`` (the default) or ``lang="zh"``. Keeping all text
here, keyed the same way in every language, means a translation can be
checked for completeness by a test and nothing is hard-coded in the HTML.
Values may hold ``str.format`` fields; each language uses the same fields.

A Chinese notebook calls ``set_language("zh")`` once, in a visible cell at its
top (``bpe-lab translate`` writes it): from then on ``labels()`` answers in
Chinese wherever a widget kept the default ``lang="en"``, so a learner passes
no ``lang=``. ``set_language("en")`` turns it back.

>>> label("next_merge", "zh")
'下一轮合并'
>>> label("round_of", "en").format(round=2, total=5)
'Round 2 of 5'
"""

from __future__ import annotations

__all__ = ["LANGS", "LABELS", "current_language", "label", "labels", "set_language"]

EN: dict[str, str] = {
    "colon": ": ",
    # navigation
    "previous": "previous",
    "next_merge": "next merge",
    "next_step": "next step",
    "reset": "reset",
    "play": "play",
    "round": "round",
    "step": "step",
    "speed": "speed",
    "slow": "slow",
    "normal": "normal",
    "fast": "fast",
    "round_of": "Round {round} of {total}",
    "step_of": "Step {round} of {total}",
    # training (MergeStepper)
    "train_title": "BPE training, one merge at a time",
    "tie_break": "tie-break",
    "rule_first": "first seen",
    "rule_lexicographic": "greatest (lexicographic)",
    "corpus": "Corpus: symbols × frequency",
    "pair_counts": "Pair counts this round",
    "pair": "pair",
    "count": "count",
    "mark": "",
    "winner": "merge next",
    "tied": "tied",
    "no_tie": "{pair} is the most frequent pair ({count}); no tie to break.",
    "tie_note": "{n} pairs tie at {count}; the “{rule}” rule picks {pair}.",
    "merges": "Merge rules learned, in order",
    "none_yet": "none yet",
    "vocab_size": "vocabulary size",
    "new_symbol": "new symbol",
    "done": "Training finished: {n} merges learned.",
    "exhausted": "Every word is a single symbol: no pair is left to merge.",
    "chosen_by": "tie of {n}, chosen by “{rule}”",
    # encoding (EncodeStepper)
    "encode_title": "Encoding “{word}” by rank replay",
    "pairs_now": "Adjacent pairs and their merge rank (lower = learned earlier)",
    "rank": "rank",
    "no_rule": "no rule",
    "lowest": "lowest rank, merged next",
    "sequence": "sequence",
    "after_merge": "after merging",
    "final_tokens": "Final tokens",
    "no_pair_left": "No adjacent pair has a merge rule: encoding is finished.",
    "rank_replay": "rank replay",
    "longest_match": "greedy longest match",
    "differs": "differs from rank replay",
    "same": "same as rank replay",
    # compression (CompressionStepper)
    "compress_title": "Gage's byte-pair compression",
    "data": "data",
    "bytes": "bytes",
    "replace_pair": "Most frequent pair {pair} ({count}×) becomes the unused byte {byte}.",
    "table": "Replacement table",
    "code": "code",
    "means": "stands for",
    "size": "{length} bytes of data + {table} table bytes = {ratio:.0%} of {original}",
    # byte-level tokens (show_tokens)
    "tokens_summary": "{tokens} tokens · {chars} characters · {bytes} bytes",
    "token_id": "id",
    # compression: the button, and why it stopped
    "next_replace": "next replacement",
    "stop_no_repeat": "No pair occurs twice any more, so a replacement would not shorten the data: compression stops.",
    "stop_no_free_byte": "Every one of the 256 byte values is in use (in the data or as a code): compression stops.",
    "stop_max_rounds": "The limit of {n} rounds is reached: compression stops.",
    # checkpoints (Predict, Quiz)
    "checkpoint": "Checkpoint",
    "predict": "Predict",
    "your_answer": "your answer",
    "check": "check",
    "reveal": "reveal the answer",
    "try_again": "Try again.",
    "correct": "Correct.",
    "wrong": "Not quite.",
    "answer_is": "The answer: {answer}.",
    "why": "Why: ",
    "pick_one": "Pick one answer, then check.",
    "type_number": "Type a number, then press Enter or check.",
    "type_answer": "Type your answer, then press Enter or check.",
    "not_a_number": "“{text}” is not a number.",
    "not_a_fraction": "“{text}” is not a fraction: write one number over another, like 27/8 or 0.5 / 3.",
    "zero_denominator": "“{text}” divides by 0: a fraction's lower number cannot be 0.",
    "within": "(within ±{tolerance})",
    "click_to_check": "click to check",
    "static_hint": "Run the notebook to answer here; or open the answer below.",
}

ZH: dict[str, str] = {
    "colon": "：",
    "previous": "上一轮",
    "next_merge": "下一轮合并",
    "next_step": "下一步",
    "reset": "重置",
    "play": "播放",
    "round": "轮次",
    "step": "步骤",
    "speed": "速度",
    "slow": "慢",
    "normal": "中",
    "fast": "快",
    "round_of": "第 {round} 轮 / 共 {total} 轮",
    "step_of": "第 {round} 步 / 共 {total} 步",
    "train_title": "BPE 训练：一次一轮合并",
    "tie_break": "平局规则",
    "rule_first": "先出现者优先",
    "rule_lexicographic": "字典序最大者优先",
    "corpus": "语料：符号 × 词频",
    "pair_counts": "本轮符号对计数",
    "pair": "符号对",
    "count": "次数",
    "mark": "",
    "winner": "下一个合并",
    "tied": "并列",
    "no_tie": "{pair} 是最频繁的符号对（{count} 次），没有并列。",
    "tie_note": "{n} 个符号对并列 {count} 次；按“{rule}”规则选中 {pair}。",
    "merges": "已学到的合并规则（按顺序）",
    "none_yet": "暂无",
    "vocab_size": "词表大小",
    "new_symbol": "新符号",
    "done": "训练结束：共学到 {n} 条合并规则。",
    "exhausted": "每个单词都已是单个符号：没有可合并的符号对了。",
    "chosen_by": "{n} 个并列，按“{rule}”选中",
    "encode_title": "按合并顺序重放来编码“{word}”",
    "pairs_now": "相邻符号对及其合并序号（越小越早学到）",
    "rank": "序号",
    "no_rule": "无规则",
    "lowest": "序号最小，下一个合并",
    "sequence": "序列",
    "after_merge": "合并后",
    "final_tokens": "最终词元",
    "no_pair_left": "没有相邻符号对有合并规则：编码结束。",
    "rank_replay": "按序重放",
    "longest_match": "贪心最长匹配",
    "differs": "与按序重放不同",
    "same": "与按序重放相同",
    "compress_title": "Gage 字节对压缩",
    "data": "数据",
    "bytes": "字节",
    "replace_pair": "最频繁的字节对 {pair}（{count} 次）替换为未用字节 {byte}。",
    "table": "替换表",
    "code": "代码",
    "means": "代表",
    "size": "{length} 字节数据 + {table} 字节表 = 原来 {original} 字节的 {ratio:.0%}",
    "tokens_summary": "{tokens} 个词元 · {chars} 个字符 · {bytes} 个字节",
    "token_id": "编号",
    "next_replace": "下一次替换",
    "stop_no_repeat": "没有出现两次的字节对了，再替换也不会变短：压缩结束。",
    "stop_no_free_byte": "256 个字节值都已占用（在数据中或作为代码）：压缩结束。",
    "stop_max_rounds": "已达到 {n} 轮的上限：压缩结束。",
    "checkpoint": "检查点",
    "predict": "预测",
    "your_answer": "你的答案",
    "check": "检查",
    "reveal": "显示答案",
    "try_again": "再试一次。",
    "correct": "正确。",
    "wrong": "不太对。",
    "answer_is": "答案：{answer}。",
    "why": "原因：",
    "pick_one": "选一个答案，然后检查。",
    "type_number": "输入一个数，然后按回车或点“检查”。",
    "type_answer": "输入你的答案，然后按回车或点“检查”。",
    "not_a_number": "“{text}”不是一个数。",
    "not_a_fraction": "“{text}”不是一个分数：请写成一个数除以另一个数，如 27/8 或 0.5 / 3。",
    "zero_denominator": "“{text}”除以 0：分数的分母不能是 0。",
    "within": "（误差 ±{tolerance} 以内）",
    "click_to_check": "点击检查",
    "static_hint": "运行本笔记本即可在此作答；或展开下面的答案。",
}

#: Language code -> labels; every dict has exactly the keys of ``EN``.
LABELS: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}
LANGS = tuple(LABELS)


#: The notebook's language: what the default ``lang="en"`` of a widget means.
_NOTEBOOK = {"lang": "en"}


def set_language(lang: str) -> None:
    """Make every widget of this kernel speak ``lang`` unless told otherwise.

    >>> set_language("zh"); label("next_merge")
    '下一轮合并'
    >>> set_language("en"); label("next_merge")
    'next merge'
    """
    if lang not in LABELS:
        raise ValueError(f"unknown lang {lang!r}; choose one of {LANGS}")
    _NOTEBOOK["lang"] = lang


def current_language() -> str:
    """The language ``set_language`` chose (``"en"`` until it is called)."""
    return _NOTEBOOK["lang"]


def labels(lang: str = "en") -> dict[str, str]:
    """The labels of one language; an unknown code fails loudly, naming the known ones.
    ``"en"``, every widget's default, means the notebook's language (``set_language``)."""
    if lang not in LABELS:
        raise ValueError(f"unknown lang {lang!r}; choose one of {LANGS}")
    return LABELS[current_language() if lang == "en" else lang]


def label(key: str, lang: str = "en") -> str:
    """One label, e.g. ``label("next_merge", "zh")``."""
    return labels(lang)[key]

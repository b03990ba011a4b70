"""A Tokenizer subclass for encode_file's worker tests, in a module of its
own: a worker imports the module of the class it rebuilds, and this one
imports only bpe_lab (the test module would bring pytest, hypothesis and
tiktoken into every worker, for seconds each)."""

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.patterns import PATTERNS


class OptionsEcho(Tokenizer):
    """Encodes every chunk as two ids: the size of its pre-token cache and
    the place of its pattern in PATTERNS."""

    def encode(self, text, **kwargs):
        return [self.max_cached_pieces, list(PATTERNS).index(self.pattern.name)]

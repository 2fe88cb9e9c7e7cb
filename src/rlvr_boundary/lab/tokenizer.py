"""A word-piece tokenizer for the lab, trained locally with Hugging Face ``tokenizers``.

Design: the text is split into chunks before BPE: a word with its leading space
(`` add``), a digit with its leading space (`` 7``) or a lone symbol (``+``).
Every digit is its own chunk, so the model sees ``7+8`` as three tokens and can
learn digit arithmetic; BPE then merges the characters inside each chunk, and
with a vocabulary this small every word of the task becomes one token. The
tokenizer is wrapped as a ``PreTrainedTokenizerFast`` and saved with the model, so
any backend loads the folder offline with ``AutoTokenizer``. Encoding with
special tokens prepends BOS (the lab's own code adds it explicitly), so a
backend sees a prompt exactly as pretraining did.
"""

from __future__ import annotations

from rlvr_boundary.errors import require

BOS, EOS, PAD = "<s>", "</s>", "<pad>"

#: Chunks BPE may not merge across: " word", " digit", a single symbol.
SPLIT_PATTERN = r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]"


def train_tokenizer(texts, vocab_size: int = 96):
    """Train a BPE tokenizer on ``texts``; return a ``PreTrainedTokenizerFast``.

    Parameters
    ----------
    texts
        Iterable of training strings (prompts and completions).
    vocab_size
        Upper bound on the vocabulary (the task needs about 40 tokens).
    """
    tk = require("tokenizers", "hf", "the lab's tokenizer")
    tf = require("transformers", "hf", "the lab's tokenizer")
    from tokenizers import Regex, decoders, models, pre_tokenizers, processors, trainers

    tok = tk.Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated")
    tok.decoder = decoders.Fuse()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[PAD, BOS, EOS],
                                  show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    # Prompts encoded with special tokens start with BOS, as in pretraining: the backends
    # (and any other client) encode a prompt with ``add_special_tokens=True``.
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", special_tokens=[(BOS, tok.token_to_id(BOS))])
    return tf.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS,
                                      pad_token=PAD, padding_side="left",
                                      clean_up_tokenization_spaces=False)

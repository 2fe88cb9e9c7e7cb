"""Build a tiny Llama or Qwen2 checkpoint locally: a BPE tokenizer trained by ``tokenizers``
on a few math sentences, and random weights scaled so the next-token distributions are
peaked (entropies spread over [0, log V]). Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "What is 12 + 7? The answer is \\boxed{19}.",
    "Compute 3 * 4 - 5. First 3 * 4 = 12, then 12 - 5 = 7, so \\boxed{7}.",
    "Let x + 2 = 5. Then x = 3. Therefore the answer is \\boxed{3}.",
    "We reason step by step: 9 / 3 = 3 and 3 ^ 2 = 9. So \\boxed{9}.",
    "Problem: find the sum of 1, 2, 3 and 4. Since 1 + 2 + 3 + 4 = 10, \\boxed{10}.",
    "<|im_start|>system\nPlease reason step by step.<|im_end|>\n<|im_start|>user\nhi<|im_end|>",
]

CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
                 "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
                 "{% endif %}")


def build_tiny_model(out: str | Path, *, arch: str = "llama", seed: int = 0, vocab: int = 320,
                     hidden: int = 32, layers: int = 2, train_steps: int = 30) -> Path:
    """Train the tokenizer, then ``train_steps`` Adam steps on the corpus (each sentence
    followed by the end-of-text token) so samples look like the corpus, carry boxed answers
    and end on their own; save as a Hugging Face folder."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast,
                              Qwen2Config, Qwen2ForCausalLM)

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tk = Tokenizer(models.BPE(unk_token=None))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tk.train_from_iterator(CORPUS * 20, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    V = tk.get_vocab_size()
    kw = dict(vocab_size=V, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
              eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id,
              bos_token_id=None, tie_word_embeddings=False)
    cfg = LlamaConfig(**kw) if arch == "llama" else Qwen2Config(**kw)
    torch.manual_seed(seed)
    model = (LlamaForCausalLM if arch == "llama" else Qwen2ForCausalLM)(cfg)
    seqs = [fast(t)["input_ids"] + [fast.eos_token_id] for t in CORPUS[:-1]]
    L = max(map(len, seqs))
    ids = torch.full((len(seqs), L), fast.pad_token_id)
    labels = torch.full((len(seqs), L), -100)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        labels[i, :len(s)] = torch.tensor(s)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(train_steps):
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    return out

"""The torch twins of capture/examples/gpt_block.h and gpt_decoder.h, shared by every script
that runs them against coil (examples_cases.py, tests/training/gpt_training.py,
tools/bench/torch_train_step.py). Parameter names match coil's (ln1.weight,
attn.in_proj_weight, ..., tok.weight, block.*, head.*), so a state_dict loads into coil.
"""
import torch
from torch import nn


class GptBlock(nn.Module):
    """Pre-LN decoder block: x + attn(ln1(x)) (causal), then x + proj(gelu(fc(ln2(x))))."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(embed_dim)
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(embed_dim)
        self.fc = nn.Linear(embed_dim, 4 * embed_dim)
        self.act = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(4 * embed_dim, embed_dim)

    def forward(self, x):
        n = x.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.proj(self.act(self.fc(self.ln2(x))))


class GptDecoder(nn.Module):
    """Token embedding, one GptBlock, a linear LM head: tokens [B, L] -> logits [B, L, vocab]."""

    def __init__(self, vocab, embed_dim, num_heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, embed_dim)
        self.block = GptBlock(embed_dim, num_heads)
        self.head = nn.Linear(embed_dim, vocab)

    def forward(self, tokens):
        return self.head(self.block(self.tok(tokens)))

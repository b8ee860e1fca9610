"""Two GRPO steps (TRL) of a tiny randomly initialised model on two gallery tasks with KernelReward: the
dataset's prompts, the reward's calling convention and the trainer fit together. No download: the tokenizer is
trained here on the gallery, the model built from a config with random weights."""

from __future__ import annotations

import pytest
from kg_helpers import GALLERY

from kernelgen.dataset import SplitRule, prompt_rows
from kernelgen.reward import KernelReward
from kernelgen.tasks import load_task

CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


@pytest.mark.slow
def test_two_grpo_steps(tiny_tokenizer_dir, tmp_path):
    trl = pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=str(tiny_tokenizer_dir / "tokenizer.json"),
                                  eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=32768, eos_token_id=tok.eos_token_id,
        bos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id))

    tasks = [load_task(GALLERY / f"{name}.py") for name in ("relu", "elu")]
    rows = prompt_rows(tasks, SplitRule(0.0))
    assert all(r["split"] == "train" and r["task_files"][0]["name"] == f"{r['task_name']}.py" for r in rows)
    # the system message (language reference + examples: ~15k tokens in this 384-token vocabulary) is left out to
    # keep two CPU steps short; the user message (the task, its bindings, the instructions) stays
    train = datasets.Dataset.from_list([{**r, "prompt": r["prompt"][1:]} for r in rows])

    reward = KernelReward(workers=2, level="sim", cap=4096, timeout=120)
    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=4,
                          num_generations=2, max_completion_length=24, learning_rate=1e-3, logging_steps=1,
                          save_strategy="no", report_to="none", use_cpu=True, bf16=False, seed=0,
                          disable_tqdm=True, dataloader_num_workers=0, gradient_checkpointing=False)
    trainer = trl.GRPOTrainer(model=model, processing_class=tok, reward_funcs=[reward], args=args, train_dataset=train)
    trainer.train()

    assert trainer.state.global_step == 2
    s = reward.stats
    assert s["judged"] + s["cached"] + s["no_code"] == 2 * 4  # every completion of both steps got a reward
    logged = [h for h in trainer.state.log_history if "rewards/ascend_kernel_reward/mean" in h]
    assert len(logged) == 2 and all(0.0 <= h["rewards/ascend_kernel_reward/mean"] <= 1.5 for h in logged)
    assert all("kernel/parse_rate" in h for h in logged)  # the reward's own metrics reach the trainer's log

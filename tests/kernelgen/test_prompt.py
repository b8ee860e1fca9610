"""The prompt pack: one source of truth for the language reference, category examples, versioned."""

from __future__ import annotations

from kg_helpers import GALLERY, REPO

from kernelgen import prompt
from kernelgen.cli_gen import main as gen_main
from kernelgen.tasks import load_task


def test_shipped_reference_is_docs_language_md():
    assert prompt.language_reference() == (REPO / "docs" / "language.md").read_text(), \
        "kernelgen/prompt/language.md must equal docs/language.md: cp docs/language.md kernelgen/prompt/"


def test_prompt_has_reference_examples_and_task_but_not_the_answer():
    task = load_task(GALLERY / "relu.py")
    msgs = prompt.initial_messages(task)
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert "# ascend-dsl language reference" in system
    assert "# Examples (the gallery kernels closest to the task)" in system and "## activation/" in system
    assert "def relu(" not in system  # the task's own gallery kernel is never shown
    assert "torch.relu(x)" in user and "```python" in user
    assert prompt.PROMPT_VERSION


def test_unknown_category_falls_back_to_gallery_examples(tmp_path):
    (tmp_path / "weird").mkdir()
    t = tmp_path / "weird" / "t.py"
    t.write_text((GALLERY / "relu.py").read_text())
    exs = prompt.gallery_examples("weird", exclude=t)
    assert exs and all(e.category == exs[0].category for e in exs)


def test_show_prompt(capsys):
    assert gen_main([str(GALLERY / "elu.py"), "--show-prompt"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# prompt {prompt.PROMPT_VERSION}") and "===== user =====" in out and "self.alpha" in out


def test_show_grammar(capsys):
    assert gen_main(["x.py", "--show-grammar"]) == 0
    assert "split_loop" in capsys.readouterr().out


def test_bad_task_file_exits_2(tmp_path, capsys):
    (tmp_path / "t.py").write_text("x = 1\n")
    assert gen_main([str(tmp_path / "t.py"), "--show-prompt"]) == 2
    assert "error[TASK-ERROR]" in capsys.readouterr().err
    assert gen_main([str(tmp_path / "missing.py")]) == 2

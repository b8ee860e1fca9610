"""The OpenAI-compatible provider against a chat-completions server on loopback (127.0.0.1, port 0):
usage recorded, a 500 retried, the grammar sent in extra_body, hard failures reported."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kg_helpers import gallery_answer

from kernelgen.providers import ProviderConfig, ProviderError, Request, make_provider

pytest.importorskip("openai")


class FakeServer:
    """Answers POST /v1/chat/completions from a script of (status, text) pairs; records requests."""

    def __init__(self, script: list[tuple[int, str]]):
        self.script = list(script)
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, text = outer.script.pop(0) if outer.script else (500, "script exhausted")
                if status != 200:
                    payload = {"error": {"message": text, "type": "server_error"}}
                else:
                    payload = {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}],
                               "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _provider(url: str, **kw):
    cfg = ProviderConfig("openai", model="test-model", base_url=url, api_key="k", timeout=5.0, retries=2, **kw)
    p = make_provider(cfg)
    p.backoff = 0.01
    return p


MSG = [{"role": "user", "content": "write relu"}]


def test_completion_usage_and_retry_on_500():
    answer = f"```python\n{gallery_answer('relu')}```"
    with FakeServer([(500, "overloaded"), (200, answer)]) as srv:
        p = _provider(srv.url, grammar=False)
        c = p.complete(MSG, Request("activation/relu", 0, 0, "start: x", seed=3, max_tokens=64, temperature=0.2))
    assert c.text == answer
    assert (c.prompt_tokens, c.completion_tokens) == (11, 7)
    assert c.meta["attempts"] == 2 and len(srv.requests) == 2
    body = srv.requests[-1]["body"]
    assert srv.requests[-1]["path"] == "/v1/chat/completions" and srv.requests[-1]["auth"] == "Bearer k"
    assert body["model"] == "test-model" and body["messages"] == MSG and body["max_tokens"] == 64
    assert "structured_outputs" not in body and "guided_grammar" not in body  # grammar off


@pytest.mark.parametrize("mode,key", [("structured_outputs", "structured_outputs"),
                                      ("guided_grammar", "guided_grammar")])
def test_grammar_goes_in_extra_body(mode, key):
    with FakeServer([(200, "x")]) as srv:
        p = _provider(srv.url, grammar=True, grammar_mode=mode)
        c = p.complete(MSG, Request("t", grammar="start: \"x\""))
    body = srv.requests[0]["body"]
    assert c.constrained
    assert key in body
    assert (body[key]["grammar"] if mode == "structured_outputs" else body[key]) == "start: \"x\""


def test_persistent_failure_is_a_provider_error():
    with FakeServer([(500, "down")] * 5) as srv:
        p = _provider(srv.url, grammar=False)
        with pytest.raises(ProviderError) as e:
            p.complete(MSG, Request("t"))
    assert e.value.code == "PROVIDER-HTTP" and "3 attempts" in e.value.message and len(srv.requests) == 3


def test_client_error_is_not_retried():
    with FakeServer([(400, "bad request")]) as srv:
        p = _provider(srv.url, grammar=False)
        with pytest.raises(ProviderError, match="HTTP 400"):
            p.complete(MSG, Request("t"))
    assert len(srv.requests) == 1


def test_missing_model_is_bad_input(monkeypatch):
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    with pytest.raises(ProviderError, match="no model"):
        make_provider(ProviderConfig("openai"))


def test_connection_refused_gives_up(monkeypatch):
    with FakeServer([]) as srv:
        url = srv.url
    p = _provider(url, grammar=False)  # server closed: nothing listens on that port any more
    with pytest.raises(ProviderError, match="connection failed|giving up"):
        p.complete(MSG, Request("t"))

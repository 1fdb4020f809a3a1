#!/usr/bin/env python3
"""A small agent on limbic: wait for attention, read the context, ask a model, act.

    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 python3 agent.py [--once]

limbic: LIMBIC_URL (else the state dir's api.json), LIMBIC_API_TOKEN. The model: any
OpenAI-compatible chat completions server at OPENAI_BASE_URL, OPENAI_API_KEY if it wants
one, OPENAI_MODEL (default "gpt-4o-mini"). The answer goes out as an action for the
effector AGENT_EFFECTOR (default "reply"), which the runtime's config must have.
--once: exit after the first batch handled. Needs the package: pip install ./clients/python
(or PYTHONPATH=clients/python).
"""
import json
import os
import sys
import urllib.request

import limbic


def ask_model(system, user):
    """One chat completion: the assistant's text."""
    body = {"model": os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(), headers={"Content-Type": "application/json",
                                                 "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.load(answer)["choices"][0]["message"]["content"]


def handle(client, attention):
    """Works on the focused thread's percepts, else on the new ones in a thread of their own."""
    thread, percepts = attention["thread"], attention["thread_percepts"]
    if not percepts:
        percepts = attention["unassigned"]
        goal = "answer: " + (percepts[0].get("text") or percepts[0]["type"])[:100]
        thread = client.create_thread(goal=goal, percepts=[p["id"] for p in percepts],
                                      reason="new percepts")
    context = client.context(query=" ".join(p.get("text") or "" for p in percepts),
                             budget_tokens=2000)
    reply = ask_model("You are an agent. Given the context as JSON, write the reply to send.",
                      json.dumps(context))
    client.enqueue_action(effector=os.environ.get("AGENT_EFFECTOR", "reply"), type="reply",
                          payload={"text": reply}, thread_id=thread["id"],
                          idempotency_key="reply-" + "-".join(p["id"] for p in percepts))
    for p in percepts:
        client.process_percept(p["id"], reason="answered")
    return thread["id"]


def main():
    client = limbic.Client(actor="agent:example")
    last = client.events_since(limit=1)["last_seq"]
    while True:
        attention = client.attention()
        if attention["thread_percepts"] or attention["unassigned"]:
            print("acted on thread", handle(client, attention), flush=True)
            if "--once" in sys.argv:
                return
            continue
        # Nothing to do: sleep until a percept arrives (a long-poll of 30 s at most).
        print("waiting for percepts after seq", last, flush=True)
        last = client.events_since(after=last, type="percept_arrived", wait=30)["scanned_to"]


if __name__ == "__main__":
    main()

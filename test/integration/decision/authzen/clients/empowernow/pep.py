"""An enforcement point built on empowernow-sdk's AuthZEN client (PyPI), as the client test drives it.

Runs the calls it reads on stdin through `SecureEnhancedPDP` and prints what each answered on stdout (one JSON
array), in the shape the Rust enforcement point prints. Environment: AUTHZEN_ORIGIN, the decision point's URL;
AUTHZEN_TOKEN_URL, an OAuth token endpoint (the library authenticates with client credentials only). The
library's search endpoints default to plural paths, so the AuthZEN ones are configured.
"""

import asyncio
import json
import os
import sys

# The library refuses to start unless it finds a FIPS-validated OpenSSL; this is its documented override for
# tests (nothing here is cryptography: it sends HTTP requests to a decision point on loopback).
os.environ.setdefault("EMPOWERNOW_FIPS_MODE", "true")

from empowernow_common.authzen.config import PDPConfig
from empowernow_common.authzen.models import (
    SecureAction,
    SecureAuthRequest,
    SecureContext,
    SecureResource,
    SecureSubject,
)
from empowernow_common.authzen.secure_client_v2 import SecureEnhancedPDP


def config() -> PDPConfig:
    return PDPConfig(
        connection={
            "base_url": os.environ["AUTHZEN_ORIGIN"],
            "token_url": os.environ["AUTHZEN_TOKEN_URL"],
            "client_id": "enforcement-point",
            "client_secret": "enforcement-point-secret",
        },
        endpoints={
            "search_subjects": "/access/v1/search/subject",
            "search_resources": "/access/v1/search/resource",
            "search_actions": "/access/v1/search/action",
        },
        # Every call reaches the decision point: the test asks what it answers, not what the client remembers.
        cache={"enabled": False},
    )


def context_of(request: dict) -> SecureContext:
    """The call's context, but its `time`: the library types it a datetime, which its own JSON encoding cannot
    write (it fails before sending)."""
    return SecureContext(**{key: value for key, value in request.get("context", {}).items() if key != "time"})


def auth_request(request: dict, defaults: dict) -> SecureAuthRequest:
    merged = {**defaults, **request}
    return SecureAuthRequest(
        subject=SecureSubject(**merged["subject"]),
        resource=SecureResource(**merged["resource"]),
        action=SecureAction(**merged["action"]),
        context=context_of(merged),
    )


def answer_of(result) -> dict:
    answer = {"decision": bool(result.decision)}
    if result.raw_context:
        answer["context"] = result.raw_context
    return answer


def page_of(response: dict, results: list) -> dict:
    return {"page": response.get("page"), "results": results}


def entities_page(response: dict) -> dict:
    return page_of(response, [{"type": entity.type, "id": entity.id} for entity in response["results"]])


async def call(pdp: SecureEnhancedPDP, step: dict) -> dict:
    request = step["request"]
    name = step["call"]
    context = context_of(request) if "context" in request else None
    if name == "evaluate":
        return answer_of(await pdp.evaluate(auth_request(request, {})))
    if name == "evaluate_batch":
        defaults = {key: value for key, value in request.items() if key not in ("evaluations", "options")}
        items = [auth_request(item, defaults) for item in request["evaluations"]]
        return {"evaluations": [answer_of(result) for result in await pdp.evaluate_batch(items)]}
    if name == "search_subjects":
        action, resource = SecureAction(**request["action"]), SecureResource(**request["resource"])
        subject_type = request["subject"]["type"]
        return entities_page(await pdp.search_subjects(action, resource, subject_type, context=context))
    if name == "search_resources":
        subject, action = SecureSubject(**request["subject"]), SecureAction(**request["action"])
        resource_type = request["resource"]["type"]
        return entities_page(await pdp.search_resources(subject, action, resource_type, context=context))
    if name == "search_actions":
        subject, resource = SecureSubject(**request["subject"]), SecureResource(**request["resource"])
        response = await pdp.search_actions(subject, resource, context=context)
        return page_of(response, [{"name": action.name} for action in response["results"]])
    raise ValueError(f"unknown call {name}")


async def main() -> None:
    steps = json.load(sys.stdin)
    answers = []
    async with SecureEnhancedPDP(config()) as pdp:
        for step in steps:
            try:
                answers.append({"call": step["call"], "response": await call(pdp, step)})
            except Exception as error:  # noqa: BLE001 - every failure is reported as the call's answer
                answers.append({"call": step["call"], "error": repr(error)})
    print(json.dumps(answers, default=str))


asyncio.run(main())

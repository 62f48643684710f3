"""Schemathesis hooks: the request rules the OpenAPI documents state in descriptions, not in schemas.

A schema-valid request may still break one of them (an expiryTime in the past, a `to` before `from`, a
cursor or ZedToken the service never issued, an event time far ahead, an itemType or accessType that the
catalog item does not have). Positive cases are mapped onto
requests that keep them, so that positive_data_acceptance tests what the schemas promise; negative cases
are left alone (they are refused either way).
"""

import ast
import copy
import json
import os
import threading
import uuid
import zlib
from datetime import datetime, timedelta, timezone

import schemathesis
from schemathesis import GenerationMode

# CPython before 3.12.5 keeps the recursion counter of ast.parse's tree construction in state that every
# thread shares (a CPython bug, fixed in 3.12.5): when two of schemathesis's worker threads parse at once (hypothesis
# parses source files to describe its strategies), one of them can fail with "SystemError: AST constructor
# recursion depth mismatch", which ends the operation's tests with a runtime error that says nothing about the
# server. One parse at a time keeps the threads apart; the parses are rare and cached, so it costs nothing.
_PARSE_LOCK = threading.Lock()
_parse = ast.parse


def _parse_alone(*args, **kwargs):
    with _PARSE_LOCK:
        return _parse(*args, **kwargs)


ast.parse = _parse_alone


def _future() -> str:
    return (datetime.now(timezone.utc) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parsed(value):
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _keep_future_expiry(document):
    if isinstance(document, dict) and "expiryTime" in document:
        document["expiryTime"] = _future()


def _keep_event_time_now(event):
    if isinstance(event, dict) and "time" in event:
        event["time"] = _now()


# OpenAPI patterns are ECMA-262 regular expressions, and hypothesis draws from them with Python's re, whose `.`
# also matches \r, \u2028 and \u2029 and whose `$` also matches before a final \n. A string drawn with one of
# these line terminators may match in Python and not in ECMA-262, so it is no positive case of the contract.
ECMA_LINE_TERMINATORS = ("\n", "\r", "\u2028", "\u2029")


def _keep_ecma_content_type(event):
    content_type = event.get("datacontenttype") if isinstance(event, dict) else None
    if isinstance(content_type, str) and any(c in content_type for c in ECMA_LINE_TERMINATORS):
        event["datacontenttype"] = "application/json"


# The check's vocabulary is the deployment's type registry (src/spicedb/registry.yaml), not a schema: a
# positive check names the `resource` type, a user, and one of the relations that type defines.
RESOURCE_RELATIONS = {"owner", "editor", "viewer", "api", "file", "sub"}


def _keep_check_vocabulary(body):
    if "subject_type" not in body or "relation" not in body:
        return
    body.update(subject_type="user", resource_type="resource")
    body.pop("organisation_id", None)
    if body["relation"] not in RESOURCE_RELATIONS:
        body["relation"] = "api"


def _keep_authzen_part(part, kind):
    """An AuthZEN subject, resource or action (a request's, a default's or one evaluation's) in the vocabulary."""
    if not isinstance(part, dict):
        return
    if kind == "subject" and "type" in part:
        part["type"] = "user"
        if isinstance(part.get("properties"), dict):
            part["properties"].pop("organisation_id", None)
    if kind == "resource" and "type" in part:
        part["type"] = "resource"
    if kind == "action" and part.get("name") not in RESOURCE_RELATIONS:
        part["name"] = "api"


# An evaluation takes each part it lacks from the request's top level: a positive batch has all three there.
AUTHZEN_DEFAULTS = {
    "subject": {"type": "user", "id": "contract-user"},
    "resource": {"type": "resource", "id": "urn:contract:item"},
    "action": {"name": "api"},
}


def _keep_authzen_vocabulary(body):
    """The AuthZEN routes speak the check's vocabulary; a page token is one the service issued."""
    for document in [body, *(body.get("evaluations") or [] if isinstance(body.get("evaluations"), list) else [])]:
        if isinstance(document, dict):
            for kind in ("subject", "resource", "action"):
                _keep_authzen_part(document.get(kind), kind)
    if isinstance(body.get("page"), dict):
        body["page"].pop("token", None)
        body["page"].pop("next_token", None)


# The stack's CatalogItems (CONTRACT_CATALOG, set by test/contract/support/targets.ts). A create on an item
# that does not exist ends at its 404 before any other rule; on one that does, the item's itemType and access
# types are rules of the catalog (configuration), stated in the documents' descriptions.
CATALOG = json.loads(os.environ.get("CONTRACT_CATALOG") or "[]")


def _catalog_item_for(item_id):
    """The catalog item a positive create names instead of a generated id: the same one for the same id."""
    return CATALOG[zlib.crc32(str(item_id).encode()) % len(CATALOG)]


def _keep_allowed_access(access, allowed):
    if not isinstance(access, list):
        return
    for index, entry in enumerate(access):
        if isinstance(entry, dict) and entry.get("accessType") not in allowed:
            entry["accessType"] = allowed[index % len(allowed)]


def _keep_catalog_item(document, access):
    """A create names an item of the catalog, with its itemType and access types it allows."""
    if not CATALOG or not isinstance(document, dict) or "itemId" not in document:
        return
    item = _catalog_item_for(document["itemId"])
    document["itemId"] = item["itemId"]
    if "itemType" in document:
        document["itemType"] = item["itemType"]
    _keep_allowed_access(access, item["accessTypes"])


def _constraints_access(item):
    constraints = item.get("constraints") if isinstance(item, dict) else None
    return constraints.get("access") if isinstance(constraints, dict) else None


def _unique_access(document):
    """Each accessType at most once in an access list (Kubernetes schemas cannot say uniqueItems)."""
    access = document.get("access") if isinstance(document, dict) else None
    if not isinstance(access, list):
        return
    seen, unique = set(), []
    for entry in access:
        key = repr(entry.get("accessType")) if isinstance(entry, dict) else repr(entry)
        if key not in seen:
            seen.add(key)
            unique.append(entry)
    document["access"] = unique


# A snapshot of the full 10000 members writes as many Membership resources: minutes on two shared cores, so
# the run keeps positive snapshots small (the integration tests cover the size limit itself).
MAX_SNAPSHOT_MEMBERS_SENT = 100


def _map_body(body):
    if isinstance(body, list):
        for event in body:
            _keep_event_time_now(event)
            _keep_ecma_content_type(event)
        return
    if not isinstance(body, dict):
        return
    _keep_future_expiry(body)
    _keep_catalog_item(body, body.get("access"))
    _keep_event_time_now(body)
    _keep_ecma_content_type(body)
    body.pop("consistency_token", None)
    _keep_check_vocabulary(body)
    _keep_authzen_vocabulary(body)
    _unique_access(body)
    if isinstance(body.get("userIds"), list):
        body["userIds"] = body["userIds"][:MAX_SNAPSHOT_MEMBERS_SENT]
    for item in body.get("request", []) if isinstance(body.get("request"), list) else []:
        _keep_future_expiry(item)
        _keep_catalog_item(item, _constraints_access(item))
        if isinstance(item, dict):
            _unique_access(item.get("constraints"))


def _keep_one_subject(query):
    """GET /explain names exactly one of userId and agentId (stated in both parameters' descriptions)."""
    if "userId" in query and "agentId" in query:
        query.pop("agentId")
    elif "userId" not in query and "agentId" not in query:
        query["userId"] = str(uuid.uuid4())


def _map_query(query, path):
    query.pop("cursor", None)
    if path == "/explain":
        _keep_one_subject(query)
    start, end = _parsed(query.get("from")), _parsed(query.get("to"))
    try:
        if start is not None and end is not None and start >= end:
            query.pop("to")
    except TypeError:  # one bound without an offset: not a date-time the schema allows, so left as is
        pass


# before_call rather than map_case: it sees the cases of every phase (the examples' too) as they are sent.
@schemathesis.hook
def before_call(context, case, kwargs):
    if case.meta is None or case.meta.generation.mode != GenerationMode.POSITIVE:
        return
    # Cases may share their parts, so the mapped ones are copies.
    case.body = copy.deepcopy(case.body)
    if case.path == "/access/v1/evaluations" and isinstance(case.body, dict):
        for kind, default in AUTHZEN_DEFAULTS.items():
            if not isinstance(case.body.get(kind), dict):
                case.body[kind] = copy.deepcopy(default)
    _map_body(case.body)
    if isinstance(case.query, dict):
        case.query = dict(case.query)
        _map_query(case.query, case.path)

"""Redfish SessionService and sessions (X-Auth-Token) of a lab BMC."""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any

from roce_wizard.lab.redfish.http import (
    RedfishError,
    Request,
    Response,
    Session,
    _message,
    _no_session,
    _not_found,
    _success,
)
from roce_wizard.lab.redfish.service import _collection
from roce_wizard.lab.redfish.vendors import BASE, SESSION_TIMEOUT_S

if TYPE_CHECKING:
    from roce_wizard.lab.redfish.bmc import Bmc


def get_session_service(bmc: Bmc, req: Request) -> Response:
    return Response(200, {
        "@odata.context": "/redfish/v1/$metadata#SessionService.SessionService",
        "@odata.id": bmc._p("/redfish/v1/SessionService"),
        "@odata.type": "#SessionService.v1_1_8.SessionService",
        "Id": "SessionService",
        "Name": "Session Service",
        "Description": "Session Service",
        "ServiceEnabled": True,
        "SessionTimeout": SESSION_TIMEOUT_S,
        "Sessions": {"@odata.id": bmc._p("/redfish/v1/SessionService/Sessions")},
        "Status": {"Health": "OK", "State": "Enabled"},
    })


def _session_path(bmc: Bmc, sid: str) -> str:
    return bmc._p(f"/redfish/v1/SessionService/Sessions/{sid}")


def get_sessions(bmc: Bmc, req: Request) -> Response:
    return _collection(bmc, "/redfish/v1/SessionService/Sessions", "Session Collection",
                            [f"/redfish/v1/SessionService/Sessions/{s}" for s in bmc.sessions],
                            "SessionCollection")


def _session_body(bmc: Bmc, session: Session) -> dict[str, Any]:
    return {
        "@odata.context": "/redfish/v1/$metadata#Session.Session",
        "@odata.id": _session_path(bmc, session.id),
        "@odata.type": "#Session.v1_3_0.Session",
        "Id": session.id,
        "Name": "User Session",
        "Description": "User Session",
        "UserName": session.username,
    }


def post_session(bmc: Bmc, req: Request) -> Response:
    data = req.json_object()
    user, password = data.get("UserName"), data.get("Password")
    if not isinstance(user, str) or not isinstance(password, str):
        missing = "UserName" if not isinstance(user, str) else "Password"
        raise RedfishError(400, _message(f"{BASE}.CreateFailedMissingReqProperties",
                                         f"The create operation failed because the required property {missing} "
                                         "was missing from the request.", [missing], [f"#/{missing}"],
                                         severity="Critical"))
    if not bmc.lab.check_password(user, password):
        raise _no_session()
    sid = str(bmc._next_session)
    bmc._next_session += 1
    session = Session(sid, secrets.token_hex(16), user, time.monotonic())
    bmc.sessions[sid] = session
    return Response(201, _session_body(bmc, session),
                    {"X-Auth-Token": session.token, "Location": _session_path(bmc, sid)})


def _session(bmc: Bmc, sid: str) -> Session:
    session = bmc.sessions.get(sid)
    if session is None:
        raise _not_found(f"/redfish/v1/SessionService/Sessions/{sid}")
    return session


def get_session(bmc: Bmc, req: Request, sid: str) -> Response:
    return Response(200, _session_body(bmc, _session(bmc, sid)))


def delete_session(bmc: Bmc, req: Request, sid: str) -> Response:
    _session(bmc, sid)
    del bmc.sessions[sid]
    return Response(200, {"@Message.ExtendedInfo": [_success()]})

"""iDRAC jobs of a lab BMC: staged BIOS settings committed by a job, applied on the next reboot."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from roce_wizard.lab.redfish.http import Job, RedfishError, Request, Response, _message, _now_iso, _success, _sys011
from roce_wizard.lab.redfish.vendors import BASE

if TYPE_CHECKING:
    from roce_wizard.lab.redfish.bmc import Bmc


def _new_job(bmc: Bmc, values: dict[str, Any]) -> Job:
    job = Job(bmc.lab.new_job_id(), time.time(), bmc.host.boot_count, dict(values))
    bmc.jobs[job.id] = job
    return job


def _commit(bmc: Bmc) -> Job:
    """Turn the staged values into a configuration job: the world applies them at the next boot."""
    job = _new_job(bmc, bmc.staged)
    bmc.host.bios_pending.update(bmc.staged)
    bmc.staged.clear()
    return job


def _job_body(bmc: Bmc, job: Job, path: str) -> dict[str, Any]:
    state = job.state(bmc.host)
    message, msg_id, percent = {
        "Scheduled": ("Task successfully scheduled.", "JCP001", 0),
        "Running": ("Job in progress.", "PR20", 34),
        "Completed": ("Job completed successfully.", "PR19", 100),
    }[state]
    done = _now_iso(bmc.host.boot_time) if state == "Completed" else None
    return {
        "@odata.context": "/redfish/v1/$metadata#DellJob.DellJob",
        "@odata.id": path,
        "@odata.type": "#DellJob.v1_5_0.DellJob",
        "ActualRunningStartTime": done,
        "ActualRunningStopTime": done,
        "CompletionTime": done,
        "Description": "Job Instance",
        "EndTime": "TIME_NA",
        "Id": job.id,
        "JobState": state,
        "JobType": "BIOSConfiguration",
        "Message": message,
        "MessageArgs": [],
        "MessageArgs@odata.count": 0,
        "MessageId": msg_id,
        "Name": job.name,
        "PercentComplete": percent,
        "StartTime": _now_iso(job.created),
        "TargetSettingsURI": None,
    }


def get_jobs(bmc: Bmc, req: Request) -> Response:
    base = req.path.rstrip("/")
    members = [f"{base}/{jid}" for jid in bmc.jobs]
    return Response(200, {
        "@odata.context": "/redfish/v1/$metadata#DellJobCollection.DellJobCollection",
        "@odata.id": base,
        "@odata.type": "#DellJobCollection.DellJobCollection",
        "Description": "Collection of Job Instances",
        "Id": "JobQueue",
        "Name": "JobQueue",
        "Members": [{"@odata.id": m} for m in members],
        "Members@odata.count": len(members),
    })


def post_job(bmc: Bmc, req: Request) -> Response:
    data = req.json_object()
    target = data.get("TargetSettingsURI")
    if target is None:
        raise RedfishError(400, _message(f"{BASE}.CreateFailedMissingReqProperties",
                                         "The create operation failed because the required property "
                                         "TargetSettingsURI was missing from the request.",
                                         ["TargetSettingsURI"], ["#/TargetSettingsURI"],
                                         severity="Critical"))
    if not isinstance(target, str) or target.rstrip("/") != bmc.settings_path:
        raise RedfishError(400, _message(f"{BASE}.PropertyValueNotInList",
                                         f"The value '{target}' for the property TargetSettingsURI is not in "
                                         "the list of acceptable values.", [target, "TargetSettingsURI"],
                                         ["#/TargetSettingsURI"],
                                         resolution=f"The lab's BMC takes {bmc.settings_path}."))
    if bmc.scheduled_job() is not None:
        raise _sys011()
    if not bmc.staged:
        raise RedfishError(400, _message(f"{BASE}.GeneralError",
                                         "No pending data present to create a Configuration job.",
                                         resolution="PATCH the attributes to change into "
                                                    f"{bmc.settings_path} first, then create the job."))
    job = _commit(bmc)
    location = f"{req.path.rstrip('/')}/{job.id}"
    return Response(200, {"@Message.ExtendedInfo": [_success()]}, {"Location": location})


def _job(bmc: Bmc, jid: str) -> Job:
    job = bmc.jobs.get(jid)
    if job is None:
        raise RedfishError(404, _message(f"{BASE}.ResourceMissingAtURI",
                                         f"The resource at the URI {bmc.manager_path}/Jobs/{jid} was not "
                                         "found.", [jid], severity="Critical",
                                         resolution="Enter the correct job ID and retry the operation."))
    return job


def get_job(bmc: Bmc, req: Request, jid: str) -> Response:
    return Response(200, _job_body(bmc, _job(bmc, jid), req.path.rstrip("/")))


def delete_job(bmc: Bmc, req: Request, jid: str) -> Response:
    job = _job(bmc, jid)
    if job.state(bmc.host) == "Running":
        raise RedfishError(400, _message(f"{BASE}.GeneralError",
                                         f"Unable to delete the job {jid} because it is running.",
                                         resolution="Wait for the job to complete."))
    if job.state(bmc.host) == "Scheduled":
        for key in job.values:  # abandon: the committed values are no longer pending
            bmc.host.bios_pending.pop(key, None)
    del bmc.jobs[jid]
    return Response(200, {"@Message.ExtendedInfo": [_success()]})

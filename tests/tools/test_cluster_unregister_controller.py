"""``kraftwire cluster unregister-controller``'s output for each answer, as Kafka 4.4's ClusterTool prints it
(``unregisterController``: success on stdout; UnsupportedVersionException — a level below 4.4-IV2 — on stdout too,
exit 0; any other error re-thrown, its ``ExecutionException`` message on stderr). The live exchange is in
``tests/roles/test_unregister_controller.py``."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.tools.cluster import ClusterCommandError, unregister_controller_outcome


def test_success_and_an_old_level_print_on_stdout():
    assert unregister_controller_outcome(3001, ec.NONE, None) == "Controller 3001 is no longer registered."
    assert unregister_controller_outcome(3001, ec.UNSUPPORTED_VERSION, "The current MetadataVersion is too old to "
                                         "support controller unregistration.") == \
        "The target cluster does not support the controller unregistration API."


@pytest.mark.parametrize("code, message, printed", [
    (ec.CONTROLLER_ID_NOT_REGISTERED, "Controller ID 5 is not currently registered.",
     "org.apache.kafka.common.errors.ControllerIdNotRegisteredException: Controller ID 5 is not currently "
     "registered."),
    (ec.INVALID_REQUEST, "Controller cannot unregister itself while it is active.",
     "org.apache.kafka.common.errors.InvalidRequestException: Controller cannot unregister itself while it is "
     "active."),
])
def test_other_refusals_are_the_admin_clients_exception(code, message, printed):
    with pytest.raises(ClusterCommandError) as refused:
        unregister_controller_outcome(5, code, message)
    assert str(refused.value) == printed


def test_the_id_is_required_as_kafkas_parser_requires_it(capsys):
    from kraftwire.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["cluster", "unregister-controller", "--bootstrap-server", "localhost:1"])
    assert stopped.value.code == 1
    assert "the following arguments are required: --id/-i" in capsys.readouterr().err

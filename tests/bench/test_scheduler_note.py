"""bench.cpu.scheduler_note: whether `nice` can order the benchmark against its neighbours."""

from bench.cpu import scheduler_note


def test_autogroup_on_is_said_because_nice_then_ranks_only_within_a_session(tmp_path):
    setting = tmp_path / "sched_autogroup_enabled"
    setting.write_text("1\n")
    assert "nice does not rank processes of other sessions" in scheduler_note(str(setting))
    setting.write_text("0\n")
    assert scheduler_note(str(setting)) == "; autogroup off"
    assert scheduler_note(str(tmp_path / "absent")) == ""  # a kernel without the setting

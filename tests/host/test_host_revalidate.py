"""A real `moon host run`: a validation that failed only because the bot did not join in
time (which a loaded host can cause) is tried again, not charged, before the version is
rejected; `moon host revalidate` has a rejected version validated again, unchanged, and
the organiser's a disabled one (active again once it passes)."""

from __future__ import annotations

import re
import shutil
import subprocess

from host_support import EXAMPLES, MOON, ROOT, HostProcess, make_competition, tar_folder


def test_a_start_up_stall_is_tried_again_and_a_rejected_version_can_be_again(tmp_path):
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    toml.write_text(re.sub(r"(?m)^startup_ms = \d+", "startup_ms = 2000", toml.read_text()))
    bot = tmp_path / "sleepy"
    shutil.copytree(EXAMPLES / "random", bot)
    src = (bot / "bot.py").read_text()
    (bot / "bot.py").write_text(src.replace('if __name__ == "__main__":\n',
                                            'if __name__ == "__main__":\n'
                                            "    import time\n    time.sleep(6)\n"))
    (bot / "bot.toml").write_text((bot / "bot.toml").read_text().replace(
        'name = "random"', 'name = "sleepy"'))
    host = HostProcess(folder, None).start()
    try:
        ann = host.register("ann")
        v = host.submit(ann, tar_folder(bot)).json()
        done = host.wait_version(ann, v["id"], timeout=240)
        assert done["status"] == "rejected"
        assert done["reason"].startswith("validation: ") and "startup_stall" in \
            done["reason"]
        # tried three times in all: twice again for the host's possible slowness
        assert done["reason"].endswith("(tried 3 times: it never joined in time)")
        log = host.call("GET", f"/api/versions/{v['id']}/log", ann).text
        assert "of its process starting (the host took " in log

        out = subprocess.run([*MOON, "host", "revalidate", host.url, str(v["id"]),
                              "--token", ann], capture_output=True, text=True, cwd=ROOT,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().endswith("pending (validated again)")
        again = host.wait_version(ann, v["id"], timeout=240)
        assert again["status"] == "rejected"
        assert again["reason"].endswith("(tried 3 times: it never joined in time)")
        # someone else's version: one line, exit 1
        bob = host.register("bob")
        out = subprocess.run([*MOON, "host", "revalidate", host.url, str(v["id"]),
                              "--token", bob], capture_output=True, text=True, cwd=ROOT,
                             timeout=60)
        assert out.returncode == 1
        assert f"no version {v['id']} of yours" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    finally:
        host.stop()


def test_the_organiser_has_a_disabled_version_validated_again_and_it_plays_again(tmp_path):
    folder = make_competition(tmp_path / "comp")
    host = HostProcess(folder, None).start()
    try:
        ann = host.register("ann")
        v = host.submit(ann, tar_folder(EXAMPLES / "random")).json()
        assert host.wait_version(ann, v["id"])["status"] == "active"
        host.ok("POST", f"/api/versions/{v['id']}/disable", host.admin,
                json={"reason": "a test"})

        def validations() -> int:
            return int(host.ok("GET", f"/api/games?kind=validation&version={v['id']}",
                               host.admin)["total"])
        assert validations() == 1
        # its owner may not: one line, exit 1, nothing changed
        out = subprocess.run([*MOON, "host", "revalidate", host.url, str(v["id"]),
                              "--token", ann], capture_output=True, text=True, cwd=ROOT,
                             timeout=60)
        assert out.returncode == 1 and "only the organiser" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        assert host.ok("GET", f"/api/versions/{v['id']}", ann)["status"] == "disabled"
        # the organiser: built and validated again, unchanged, then active again
        out = subprocess.run([*MOON, "host", "revalidate", host.url, str(v["id"]),
                              "--folder", str(folder)], capture_output=True, text=True,
                             cwd=ROOT, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().endswith("pending (validated again)")
        again = host.wait_version(ann, v["id"], timeout=240)
        assert again["status"] == "active" and not again["reason"], again
        assert validations() == 2
        audit = host.ok("GET", "/api/audit", host.admin)
        entries = audit["entries"] if isinstance(audit, dict) else audit
        assert [e["action"] for e in entries[:2]] == ["revalidate", "disable"]
    finally:
        host.stop()

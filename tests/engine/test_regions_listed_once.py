"""moto's EC2 models list regions on import through three new boto3 Sessions; the engine lets one
botocore session answer them from its endpoint data, without EC2's API model
(engine/bookkeeping/service_models.py, `regions_listed_once`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import boto3

from onceflow.engine.bookkeeping.service_models import regions_listed_once

PARTITIONS = ("aws", "aws-us-gov", "aws-cn")


def test_the_lists_are_the_ones_a_new_session_gives() -> None:
    fresh = [boto3.Session().get_available_regions("ec2", partition_name=p) for p in PARTITIONS]
    with regions_listed_once():
        listed = [boto3.Session().get_available_regions("ec2", partition_name=p) for p in PARTITIONS]
    assert listed == fresh and all(fresh)
    assert boto3.Session().get_available_regions("ec2") == fresh[0]  # restored afterwards


def test_importing_the_engine_never_reads_ec2s_api_model() -> None:
    """In a fresh interpreter: every read of EC2's model file counted while the engine imports."""
    script = textwrap.dedent(
        """
        from botocore import loaders
        read = loaders.JSONFileLoader.load_file
        ec2 = []
        def counted(self, file_path):
            if "/ec2/" in str(file_path) and str(file_path).endswith("/service-2"):  # not its sdk-extras
                ec2.append(file_path)
            return read(self, file_path)
        loaders.JSONFileLoader.load_file = counted
        import onceflow.engine
        print(len(ec2))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    # Three reads before regions_listed_once (one per new Session), one with it; none since EC2's
    # endpoint prefix is known (ENDPOINT_PREFIXES).
    assert done.stdout.split()[-1] == "0", done.stdout + done.stderr

# Trusted setup, run with the network open: "install" the task's
# dependencies. It fails when the package index is unreachable, so a setup
# that ran under the agent's lock would fail the apply.
curl -sS -o /dev/null https://pypi.org/simple/ && mkdir -p /opt/task-deps && echo installed > /opt/task-deps/ok

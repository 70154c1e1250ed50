# Hardware integration tests on an AMD GPU, against the image's own /opt/rocm.
#   docker build --build-arg ROCM_IMAGE_TAG=6.2.4 -t rocpy-hw .
#   docker run --rm --device=/dev/kfd --device=/dev/dri --group-add video \
#     --security-opt seccomp=unconfined rocpy-hw
# The build needs no GPU: tools/install.sh selects no backend. The tests run
# with ROCPY_BACKEND=amd, so they use the GPU or fail saying why.
ARG ROCM_IMAGE_TAG=6.2.4
FROM rocm/dev-ubuntu-22.04:${ROCM_IMAGE_TAG}

ENV ROCM_PATH=/opt/rocm \
    PIP_NO_CACHE_DIR=1 \
    ROCPY_BACKEND=amd

WORKDIR /src
COPY . /src
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# the same install script as CI and the README, pointed at the image's ROCm:
# a venv /src/.venv, rocpy built in place
RUN bash tools/install.sh && rm -rf /var/lib/apt/lists/*

CMD ["bash", "-c", "/src/.venv/bin/rocpy selftest && /src/.venv/bin/python -m pytest -q"]

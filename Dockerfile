# syntax=docker/dockerfile:1
#
# kcm-rs container image: `docker build -t kcm-rs:dev .` is the whole recipe.
#
# Stage 1 builds one static binary (musl, ring's and mimalloc's C code through musl-gcc).
# Stage 2 is distroless "static": no shell, no package manager, CA
# certificates only. The binary is on the PATH twice, as `kcm-rs` and as
# `kube-controller-manager` (a symbolic link), so that kubeadm's static pod
# manifest, whose command is `kube-controller-manager`, runs it with only
# the image swapped. The binary writes nothing to disk (its serving
# certificate is generated in memory unless --cert-dir says otherwise), so
# the container runs with a read-only root filesystem.
#
# `.ci/run` builds the same binary outside a container (same toolchain
# version check, same target, same cargo flags) and runs `--version` on it,
# since no container engine runs on the CI machines.

# The Rust release CI builds with; at least Cargo.toml's rust-version
# (edition 2024). tests/deploy.rs checks the two agree.
ARG RUST_VERSION=1.95

FROM docker.io/library/rust:${RUST_VERSION}-bookworm AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY . .
RUN cargo build --release --locked --target x86_64-unknown-linux-musl -p kcm-rs --bin kcm-rs \
 && install -D -s -m 0555 target/x86_64-unknown-linux-musl/release/kcm-rs /out/bin/kcm-rs \
 && ln -s kcm-rs /out/bin/kube-controller-manager \
 && /out/bin/kube-controller-manager --version

FROM gcr.io/distroless/static-debian12:nonroot
# The directory, so that the link stays a link.
COPY --from=build /out/bin/ /usr/local/bin/
# Root, as upstream's kube-controller-manager image runs: kubeadm's static
# pod sets no user and its kubeconfig and keys are readable by root only.
# deploy/deployment.yaml runs the image as 65532 (distroless's `nonroot`).
# hadolint ignore=DL3002
USER 0:0
# --secure-port (HTTPS: /metrics, /healthz, /livez, /readyz).
EXPOSE 10257
ENTRYPOINT ["/usr/local/bin/kcm-rs"]

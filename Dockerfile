# The cairn gateway image: a release build of the `cairn` binary, which
# carries the SPA (web-client/dist, embedded at compile time), run as an
# unprivileged user. Build context: the repository root (.dockerignore keeps
# the rest out).
#
#     docker build -t cairn .
#     docker run -e CAIRN_TOKEN=secret -p 127.0.0.1:8787:8787 cairn

FROM rust:1.95-bookworm AS builder
WORKDIR /src
# Dependencies first, in a layer of their own: a change under src/ does not
# rebuild them. Cargo reads every target the manifest declares, so benches/
# and examples/ come along; src/ is a stub until the real one is copied.
COPY Cargo.toml Cargo.lock ./
COPY benches benches
COPY examples examples
RUN mkdir src \
 && echo 'fn main() {}' > src/main.rs \
 && touch src/lib.rs \
 && cargo build --release --locked --bin cairn \
 && rm -rf src
COPY src src
# The committed SPA build, embedded into the binary by the next step.
COPY web-client/dist web-client/dist
# COPY keeps the files' own times, which may be older than the stub's build.
RUN touch src/main.rs src/lib.rs \
 && cargo build --release --locked --bin cairn

FROM debian:bookworm-slim
# curl serves the HEALTHCHECK only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/cairn cairn
COPY --from=builder /src/target/release/cairn /usr/local/bin/cairn
# A container listens on every interface, so `serve` requires CAIRN_TOKEN.
# CAIRN_DB defaults to SQLite in the user's home; set a postgres:// URL to
# share one store between several gateways (docker-compose.yml).
ENV CAIRN_BIND=0.0.0.0:8787 \
    CAIRN_DB=/var/lib/cairn/cairn.db
USER cairn
WORKDIR /var/lib/cairn
EXPOSE 8787
# The readiness probe is public even when a token is set.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD curl -fsS -o /dev/null http://127.0.0.1:8787/api/v1/health/ready || exit 1
ENTRYPOINT ["cairn"]
CMD ["serve"]

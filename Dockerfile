# wearhouse: one binary, built in a Rust image, run in a slim Debian image.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked && cp target/release/wearhouse /usr/local/bin/wearhouse

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 wearhouse
COPY --from=build /usr/local/bin/wearhouse /usr/local/bin/wearhouse
USER wearhouse
EXPOSE 8000
ENTRYPOINT ["wearhouse"]
CMD ["all", "--bind", "0.0.0.0:8000"]

# The agentmem image: one static binary on scratch. Nothing is pulled: the
# final (and only) stage starts FROM scratch and COPYs files built on the
# host, so it builds where no image registry answers. `make image` stages
# the context and builds it:
#
#   CGO_ENABLED=0 go build -trimpath -o dist/image/agentmem ./cmd/agentmem
#   cp /etc/ssl/certs/ca-certificates.crt dist/image/   # for OAuth issuers, cloud stores
#   mkdir -p dist/image/data
#   docker build -f Dockerfile -t agentmem:local dist/image
#
# It runs `agentmem serve --transport http` on :8787 as an unprivileged
# user, with every flag from AGENTMEM_* (docs/deploy.md):
#
#   docker run -p 8787:8787 -v agentmem-data:/data \
#     -v /etc/agentmem/keys:/etc/agentmem/keys:ro agentmem:local
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY agentmem /agentmem
COPY --chown=65532:65532 data /data
USER 65532:65532
ENV AGENTMEM_TRANSPORT=http \
    AGENTMEM_LISTEN=:8787 \
    AGENTMEM_KEYS=/etc/agentmem/keys \
    AGENTMEM_STORE=sqlite:/data/memory.db?history=on \
    HOME=/data
EXPOSE 8787
WORKDIR /data
ENTRYPOINT ["/agentmem", "serve"]

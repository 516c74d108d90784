# syntax=docker/dockerfile:1
#
# The text2sql service: `text2sql serve` (HTTP API, web page, MCP at /mcp).
#
#   docker build -t text2sql .
#   docker run --rm -p 8080:8080 -e TEXT2SQL_TOKENS=alice:$(openssl rand -hex 16) \
#     -e GEMINI_API_KEY text2sql                      # the bundled demo database
#   docker run --rm -p 8080:8080 -v $PWD/data:/data:ro -e TEXT2SQL_TOKENS=... -e GEMINI_API_KEY \
#     text2sql serve --db /data/app.sqlite --knowledge /data/knowledge.yaml --addr 0.0.0.0:8080
#
# go-sqlite3 (and pg_query_go) need cgo, so the binary is built with gcc
# and runs on a glibc base image.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# The command is the nested module cmd/text2sql of the workspace (go.work);
# its dependencies are downloaded from the go.mod files of the modules it
# requires before the sources are copied, so that layer is cached.
COPY go.work go.mod go.sum ./
COPY cmd/text2sql/go.mod cmd/text2sql/go.sum cmd/text2sql/
COPY server/go.mod server/go.sum server/
COPY executor/mysql/go.mod executor/mysql/go.sum executor/mysql/
COPY executor/catalog/go.mod executor/catalog/go.sum executor/catalog/
COPY executor/mcpexec/go.mod executor/mcpexec/go.sum executor/mcpexec/
COPY llm/gemini/go.mod llm/gemini/go.sum llm/gemini/
COPY embed/gemini/go.mod embed/gemini/go.sum embed/gemini/
COPY internal/geminiapi/go.mod internal/geminiapi/go.sum internal/geminiapi/
RUN cd cmd/text2sql && GOWORK=off go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/text2sql ./cmd/text2sql

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /home/text2sql --uid 10001 text2sql \
 && mkdir -p /var/lib/text2sql/index \
 && chown -R text2sql /var/lib/text2sql
COPY --from=build /out/text2sql /usr/local/bin/text2sql
USER text2sql
ENV HOME=/home/text2sql \
    TEXT2SQL_ADDR=0.0.0.0:8080 \
    TEXT2SQL_LOG_FORMAT=json
EXPOSE 8080
# The vector index is rebuilt whenever the knowledge or the embedder
# changes; mount a volume here to keep it across restarts.
VOLUME ["/var/lib/text2sql/index"]
ENTRYPOINT ["text2sql"]
CMD ["serve", "--demo", "--index-dir", "/var/lib/text2sql/index"]

# syntax=docker/dockerfile:1
# gated image: a static binary on distroless, running as non-root (65532).
# No Docker engine runs where gated is developed, so this file is kept
# deliberately plain; build it with:
#   docker build --build-arg VERSION=0.1.0 -t ghcr.io/gatedhq/gated:0.1.0 .
# The Helm chart's default image is ghcr.io/gatedhq/gated:<appVersion>.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so a source change does not refetch them.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# CGO off: a static binary needs no libc in the runtime image.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/gated ./cmd/gated

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gated /usr/local/bin/gated
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/gated"]
CMD ["serve"]

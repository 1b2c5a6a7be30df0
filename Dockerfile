# Multi-stage build: a static binary on a distroless base, running as non-root.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/vrambot ./cmd/vrambot

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/vrambot /usr/local/bin/vrambot
USER nonroot:nonroot
EXPOSE 3000
ENTRYPOINT ["/usr/local/bin/vrambot"]
CMD ["serve"]

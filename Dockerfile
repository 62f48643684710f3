# syntax=docker/dockerfile:1
# One image for the three services; the first argument selects one:
#   docker run IMAGE acl-api | controller | decision-service
# It runs as a non-root user and writes nothing outside /tmp, so it works with a read-only root filesystem
# (the Helm chart mounts an emptyDir on /tmp). The runtime has node and the built app only: no npm, npx or
# corepack (nothing there installs packages, and they are the bulk of the base image's vulnerability reports).
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg SOURCE=<repository URL> -t <registry>/policy-grant-operator:0.1.0 .

# The current Node.js LTS, Debian slim. Bump the tag deliberately (and rebuild) to take security fixes. A release
# build pins the exact image by digest, which a tag does not (a tag can be pushed again):
#   --build-arg NODE_IMAGE=node:26.12.1-trixie-slim@sha256:<digest>
# with the digest `docker buildx imagetools inspect node:26.12.1-trixie-slim` prints (docs/install.md).
ARG NODE_IMAGE=node:26.12.1-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.image.json ./
COPY src ./src
# Only what the three services import (tsconfig.image.json starts from their entrypoints): no development
# stack, local control plane or developer CLIs.
RUN npm run build:image

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /src
COPY package.json package-lock.json ./
# Optional dependencies are development tools too (the embedded PostgreSQL of the development stack).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
# The package managers of the base image go; node stays.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps \
    HOME=/tmp \
    TMPDIR=/tmp
WORKDIR /app
COPY package.json ./
COPY --from=dependencies /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# OCI annotations of the build: the release's version, the commit and the repository it was built from.
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="policy-grant-operator" \
      org.opencontainers.image.description="ACL API, grant controller and decision service of policy-grant-operator" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"
# The services export the revision as policygrant_build_info's `revision` label.
ENV BUILD_REVISION="${REVISION}"
# The base image's unprivileged "node" user, by number so that runAsNonRoot can verify it.
USER 1000:1000
ENTRYPOINT ["node", "dist/cmd/main.js"]

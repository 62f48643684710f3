# syntax=docker/dockerfile:1
# One image for the three services; the first argument selects one:
#   docker run IMAGE acl-api | controller | decision-service
# It runs as a non-root user and writes nothing outside /tmp, so it works with a read-only root filesystem
# (the Helm chart mounts an emptyDir on /tmp).

# The current Node.js LTS, Debian slim. Bump the tag deliberately (and rebuild) to take security fixes.
ARG NODE_IMAGE=node:26.12.0-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps \
    HOME=/tmp \
    TMPDIR=/tmp
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force
COPY --from=build /src/dist ./dist
LABEL org.opencontainers.image.title="policy-grant-operator" \
      org.opencontainers.image.description="ACL API, grant controller and decision service of policy-grant-operator" \
      org.opencontainers.image.licenses="Apache-2.0"
# The base image's unprivileged "node" user, by number so that runAsNonRoot can verify it.
USER 1000:1000
ENTRYPOINT ["node", "dist/cmd/main.js"]

{{/*
Names. Component resources are "<fullname>-<component>"; the fullname is cut so that they stay DNS labels.
*/}}
{{- define "pgo.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "pgo.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 46 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 46 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 46 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "<fullname>-<component>"; takes (dict "root" $ "component" "acl-api"). */}}
{{- define "pgo.componentName" -}}
{{- printf "%s-%s" (include "pgo.fullname" .root) .component }}
{{- end }}

{{- define "pgo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pgo.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Labels of every object; takes (dict "root" $ "component" "<component>"). */}}
{{- define "pgo.labels" -}}
{{ include "pgo.selectorLabels" . }}
app.kubernetes.io/part-of: {{ include "pgo.name" .root }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The three services, for selectors that name them all. */}}
{{- define "pgo.services" -}}
[acl-api, controller, decision-service]
{{- end }}

{{/* The services that talk to SpiceDB: the ACL API does not (its verdict reads only the Kubernetes API). */}}
{{- define "pgo.spicedbClients" -}}
[controller, decision-service]
{{- end }}

{{/* The services' image: by digest when one is given (the tag is then ignored), else by tag. */}}
{{- define "pgo.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "pgo.settingsName" -}}
{{- printf "%s-settings" (include "pgo.fullname" .) }}
{{- end }}

{{- define "pgo.spicedbModelName" -}}
{{- printf "%s-spicedb-model" (include "pgo.fullname" .) }}
{{- end }}

{{- define "pgo.jwksConfigMapName" -}}
{{- printf "%s-jwks" (include "pgo.fullname" .) }}
{{- end }}

{{/* The Secret with the audit database's connection strings (the user creates it). */}}
{{- define "pgo.auditDatabaseSecretName" -}}
{{- .Values.audit.database.existingSecret | default (printf "%s-audit-database" (include "pgo.fullname" .)) }}
{{- end }}

{{/* The Secret with the audit chain's MAC key (the user creates it; the database never sees it). */}}
{{- define "pgo.auditChainKeySecretName" -}}
{{- .Values.audit.chainKey.existingSecret | default (printf "%s-audit-chain-key" (include "pgo.fullname" .)) }}
{{- end }}

{{/* The Secret with the keys of the decision service's page tokens: the user's, the chart's, or none. */}}
{{- define "pgo.pageTokenSecretName" -}}
{{- $pageTokens := .Values.decisionService.pageTokens }}
{{- if $pageTokens.existingSecret }}
{{- $pageTokens.existingSecret }}
{{- else if $pageTokens.keys }}
{{- printf "%s-decision-page-tokens" (include "pgo.fullname" .) }}
{{- end }}
{{- end }}

{{/* The Secret with SpiceDB's endpoint and preshared key: the user's, or the chart's. */}}
{{- define "pgo.spicedbSecretName" -}}
{{- if and .Values.spicedb.existingSecret (not .Values.spicedb.bundled.enabled) }}
{{- .Values.spicedb.existingSecret }}
{{- else }}
{{- printf "%s-spicedb" (include "pgo.fullname" .) }}
{{- end }}
{{- end }}

{{/* "true" when the decision service checks through the chart's read-only SpiceDB (never with the bundled one). */}}
{{- define "pgo.spicedbReadOnly" -}}
{{- if and .Values.spicedb.readOnly.enabled (not .Values.spicedb.bundled.enabled) }}true{{ end }}
{{- end }}

{{/* The Secret with the read-only SpiceDB's own preshared key: the user's, or the chart's. */}}
{{- define "pgo.spicedbReadOnlySecretName" -}}
{{- .Values.spicedb.readOnly.existingSecret | default (printf "%s-spicedb-read-only" (include "pgo.fullname" .)) }}
{{- end }}

{{/*
"true" when the NetworkPolicies render: as set, or (auto) whenever the decision service is exposed or a proxy
is trusted (only the proxy may reach the ports that believe it; networkpolicy.yaml refuses `false` then).
*/}}
{{- define "pgo.networkPolicyEnabled" -}}
{{- $np := .Values.networkPolicy.enabled }}
{{- $exposed := or (and .Values.httpRoute.enabled .Values.httpRoute.exposeDecisionService) (and .Values.ingress.enabled .Values.ingress.exposeDecisionService) .Values.trustProxy }}
{{- if or (eq (toString $np) "true") (and (eq (toString $np) "auto") $exposed) }}true{{ end }}
{{- end }}

{{- define "pgo.spicedbSecretKeys" -}}
{{- if and .Values.spicedb.existingSecret (not .Values.spicedb.bundled.enabled) }}
{{- toYaml .Values.spicedb.existingSecretKeys }}
{{- else }}
{{- toYaml (dict "endpoint" "endpoint" "presharedKey" "presharedKey") }}
{{- end }}
{{- end }}

{{/* "true" when SpiceDB's CA bundle is mounted: a CA Secret is named and the connection is TLS. */}}
{{- define "pgo.spicedbCaMounted" -}}
{{- if and .Values.spicedb.tls.caSecret .Values.spicedb.tls.enabled (not .Values.spicedb.bundled.enabled) }}true{{ end }}
{{- end }}

{{/*
The CA bundle a SpiceDB client verifies its SpiceDB with, as YAML {secret, key}, or nothing (system roots or
plaintext): the read-only SpiceDB's for the decision service that checks through it, else SpiceDB's. Takes the
component dict of pgo.deployment.
*/}}
{{- define "pgo.spicedbCa" -}}
{{- $values := .root.Values.spicedb }}
{{- if and (eq .component "decision-service") (include "pgo.spicedbReadOnly" .root) }}
{{- with $values.readOnly.tls }}
{{- if and .certificateSecret .caSecret }}{{ toYaml (dict "secret" .caSecret "key" .caSecretKey) }}{{ end }}
{{- end }}
{{- else if and .spicedbClient (include "pgo.spicedbCaMounted" .root) }}
{{- toYaml (dict "secret" $values.tls.caSecret "key" $values.tls.caSecretKey) }}
{{- end }}
{{- end }}

{{/* The controller's Lease: one per release, so that two releases can share a namespace. */}}
{{- define "pgo.leaderElectionId" -}}
{{- include "pgo.componentName" (dict "root" . "component" "controller") }}
{{- end }}

{{/* Where the image has the SpiceDB schema and registry (WORKDIR /app, build output dist/); the ConfigMap replaces them. */}}
{{- define "pgo.spicedbModelDir" -}}
/app/dist/spicedb
{{- end }}

{{/* The JWKS source the values select: url, inline, configMap, secret or none; more than one is an error. */}}
{{- define "pgo.jwksSource" -}}
{{- $jwks := .Values.auth.jwks }}
{{- $set := list }}
{{- if $jwks.url }}{{ $set = append $set "url" }}{{ end }}
{{- if $jwks.inline }}{{ $set = append $set "inline" }}{{ end }}
{{- if $jwks.existingConfigMap }}{{ $set = append $set "existingConfigMap" }}{{ end }}
{{- if $jwks.existingSecret }}{{ $set = append $set "existingSecret" }}{{ end }}
{{- if gt (len $set) 1 }}
{{- fail (printf "auth.jwks: set exactly one of url, inline, existingConfigMap and existingSecret (got %s)" (join ", " $set)) }}
{{- end }}
{{- if $jwks.url }}url
{{- else if $jwks.inline }}configMap
{{- else if $jwks.existingConfigMap }}configMap
{{- else if $jwks.existingSecret }}secret
{{- else }}none
{{- end }}
{{- end }}

{{/* Settings the values leave unset that the services cannot start without. */}}
{{- define "pgo.missingSettings" -}}
{{- $missing := list }}
{{- if not (or .Values.spicedb.bundled.enabled .Values.spicedb.existingSecret) }}
{{- if not .Values.spicedb.endpoint }}{{ $missing = append $missing "spicedb.endpoint: host:port of SpiceDB's gRPC API (or spicedb.existingSecret; spicedb.bundled.enabled for development)" }}{{ end }}
{{- if not .Values.spicedb.presharedKey }}{{ $missing = append $missing "spicedb.presharedKey: SpiceDB's preshared key (or spicedb.existingSecret)" }}{{ end }}
{{- end }}
{{- if include "pgo.spicedbReadOnly" . }}
{{- if not .Values.spicedb.readOnly.datastore.existingSecret }}{{ $missing = append $missing "spicedb.readOnly.datastore.existingSecret: a Secret with the connection string of SpiceDB's datastore, for the decision service's read-only SpiceDB (or spicedb.readOnly.enabled: false)" }}{{ end }}
{{- if not (or .Values.spicedb.readOnly.presharedKey .Values.spicedb.readOnly.existingSecret) }}{{ $missing = append $missing "spicedb.readOnly.presharedKey: the read-only SpiceDB's own preshared key (or spicedb.readOnly.existingSecret)" }}{{ end }}
{{- end }}
{{- if not .Values.auth.jwt.issuer }}{{ $missing = append $missing "auth.jwt.issuer: the iss of the JWTs the ACL API and the decision service accept" }}{{ end }}
{{- if not .Values.auth.jwt.audience }}{{ $missing = append $missing "auth.jwt.audience: the aud of those JWTs" }}{{ end }}
{{- if eq (include "pgo.jwksSource" .) "none" }}{{ $missing = append $missing "auth.jwks: the keys JWTs are verified with (url, inline, existingConfigMap or existingSecret)" }}{{ end }}
{{- join "\n" $missing }}
{{- end }}

{{/*
Fails the render, rather than leaving the services to crash-loop, when a setting they refuse to start without is
missing; and, when Helm sees the cluster (install, upgrade, --dry-run=server: kube-system is visible), when the
audit database Secret or its url key is absent from the release namespace.
*/}}
{{- define "pgo.requireSettings" -}}
{{- with include "pgo.missingSettings" . }}
{{- fail (printf "the services refuse to start without these values:\n  - %s" (splitList "\n" . | join "\n  - ")) }}
{{- end }}
{{- if lookup "v1" "Namespace" "" "kube-system" }}
{{- $name := include "pgo.auditDatabaseSecretName" . }}
{{- $secret := lookup "v1" "Secret" .Release.Namespace $name }}
{{- if not $secret }}
{{- fail (printf "the audit database Secret %s does not exist in namespace %s: create it with the key %s (docs/install.md), or name another in audit.database.existingSecret; the ACL API refuses to start without it" $name .Release.Namespace .Values.audit.database.urlKey) }}
{{- end }}
{{- if not (hasKey ($secret.data | default dict) .Values.audit.database.urlKey) }}
{{- fail (printf "the audit database Secret %s has no key %s (audit.database.urlKey): the ACL API refuses to start without its connection string" $name .Values.audit.database.urlKey) }}
{{- end }}
{{- /* Without it the hook Job fails on every retry, and helm waits out its whole timeout saying only that. */}}
{{- if and (eq .Values.audit.migrations "job") (not (hasKey ($secret.data | default dict) .Values.audit.database.migrationUrlKey)) }}
{{- fail (printf "the audit database Secret %s has no key %s (audit.database.migrationUrlKey): the migrations Job (audit.migrations: job) needs the schema owner's connection string; add it, or set audit.migrations to startup or skip (docs/install.md)" $name .Values.audit.database.migrationUrlKey) }}
{{- end }}
{{- $keyName := include "pgo.auditChainKeySecretName" . }}
{{- $keySecret := lookup "v1" "Secret" .Release.Namespace $keyName }}
{{- if not (hasKey ($keySecret.data | default dict) .Values.audit.chainKey.key) }}
{{- fail (printf "the audit chain key Secret %s with the key %s does not exist in namespace %s: create it (docs/install.md), or name another in audit.chainKey.existingSecret; without it a rewrite of the audit trail by the database's owner goes unnoticed" $keyName .Values.audit.chainKey.key .Release.Namespace) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Environment of a service container beyond the settings ConfigMap: the namespace it runs in, SpiceDB's endpoint and
key from the Secret (SpiceDB clients only), the audit database's writer connection string and chain key (the ACL
API; the controller, which records grant changes made outside the API), the owner's connection string only to the
ACL API and only with audit.migrations startup (by default the migrations Job alone holds it), and the paths of
mounted files. Takes the component dict of pgo.deployment.
*/}}
{{- define "pgo.env" -}}
{{- $root := .root }}
{{- $keys := include "pgo.spicedbSecretKeys" $root | fromYaml }}
- name: ACL_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- if eq .component "controller" }}
- name: LEADER_ELECTION_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: LEADER_ELECTION_ID
  value: {{ include "pgo.leaderElectionId" $root }}
{{- if $root.Values.auditActorPolicy.enabled }}
- name: AUDIT_ACTOR_FROM
  value: admission
- name: ACL_API_KUBERNETES_USER
  value: {{ include "pgo.aclApiUser" $root }}
{{- else }}
- name: AUDIT_ACTOR_FROM
  value: field-manager
{{- end }}
{{- end }}
{{- with .values.maxHeapMegabytes }}
- name: NODE_OPTIONS
  value: {{ printf "--enable-source-maps --max-old-space-size=%v" . | quote }}
{{- end }}
{{- if and (eq .component "decision-service") (include "pgo.spicedbReadOnly" $root) }}
{{- /* The read-only SpiceDB in the release namespace, with its own key; TLS once it has a certificate. */}}
- name: SPICEDB_ENDPOINT
  value: {{ printf "%s.%s.svc:50051" (include "pgo.componentName" (dict "root" $root "component" "spicedb-read-only")) $root.Release.Namespace }}
- name: SPICEDB_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "pgo.spicedbReadOnlySecretName" $root }}
      key: presharedKey
- name: SPICEDB_TLS
  value: {{ ternary "tls" "plaintext" (not (empty $root.Values.spicedb.readOnly.tls.certificateSecret)) }}
{{- else if .spicedbClient }}
- name: SPICEDB_ENDPOINT
  valueFrom:
    secretKeyRef:
      name: {{ include "pgo.spicedbSecretName" $root }}
      key: {{ $keys.endpoint }}
- name: SPICEDB_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "pgo.spicedbSecretName" $root }}
      key: {{ $keys.presharedKey }}
{{- end }}
{{- if include "pgo.spicedbCa" . }}
- name: SPICEDB_CA_FILE
  value: /etc/policy-grant-operator/spicedb-ca/ca.crt
{{- end }}
{{- if eq .component "decision-service" }}
{{- with include "pgo.pageTokenSecretName" $root }}
- name: PAGE_TOKEN_KEYS
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: keys
{{- end }}
{{- end }}
{{- if has .component (list "acl-api" "controller") }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "pgo.auditDatabaseSecretName" $root }}
      key: {{ $root.Values.audit.database.urlKey }}
- name: AUDIT_CHAIN_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "pgo.auditChainKeySecretName" $root }}
      key: {{ $root.Values.audit.chainKey.key }}
{{- end }}
{{- if and (eq .component "acl-api") (eq $root.Values.audit.migrations "startup") }}
- name: DATABASE_MIGRATION_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "pgo.auditDatabaseSecretName" $root }}
      key: {{ $root.Values.audit.database.migrationUrlKey }}
      optional: true
{{- end }}
{{- if .authenticates }}
{{- if not (has (include "pgo.jwksSource" $root) (list "url" "none")) }}
- name: JWKS_FILE
  value: /etc/policy-grant-operator/jwks/jwks.json
{{- end }}
{{- if $root.Values.auth.basicCredentialsSecret }}
- name: BASIC_CREDENTIALS_DIR
  value: /etc/policy-grant-operator/basic-credentials
{{- end }}
{{- end }}
{{- if hasKey .values "drainSeconds" }}
- name: SHUTDOWN_DRAIN_SECONDS
  value: {{ .values.drainSeconds | quote }}
{{- end }}
{{- include "pgo.tracingEnv" . }}
{{- with .values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The OTEL_* variables of a service while tracing.enabled: its service.name is the component's name. */}}
{{- define "pgo.tracingEnv" -}}
{{- $tracing := .root.Values.tracing }}
{{- if $tracing.enabled }}
- name: OTEL_TRACES_EXPORTER
  value: otlp
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ required "tracing.endpoint: the collector's OTLP/HTTP URL, required when tracing.enabled" $tracing.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: http/protobuf
- name: OTEL_SERVICE_NAME
  value: {{ include "pgo.componentName" (dict "root" .root "component" .component) | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $tracing.sampler | quote }}
{{- with $tracing.samplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ . | quote }}
{{- end }}
{{- with $tracing.resourceAttributes }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Volumes of a service pod and their mounts; both take the component dict of pgo.deployment. */}}
{{- define "pgo.volumes" -}}
{{- $root := .root }}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
- name: spicedb-model
  configMap:
    name: {{ include "pgo.spicedbModelName" $root }}
{{- with include "pgo.spicedbCa" . | fromYaml }}
- name: spicedb-ca
  secret:
    secretName: {{ .secret }}
    items:
      - key: {{ .key }}
        path: ca.crt
{{- end }}
{{- if .authenticates }}
{{- $jwks := $root.Values.auth.jwks }}
{{- $source := include "pgo.jwksSource" $root }}
{{- if eq $source "configMap" }}
- name: jwks
  configMap:
    name: {{ $jwks.existingConfigMap | default (include "pgo.jwksConfigMapName" $root) }}
    items:
      - key: {{ $jwks.key }}
        path: jwks.json
{{- else if eq $source "secret" }}
- name: jwks
  secret:
    secretName: {{ $jwks.existingSecret }}
    items:
      - key: {{ $jwks.key }}
        path: jwks.json
{{- end }}
{{- with $root.Values.auth.basicCredentialsSecret }}
- name: basic-credentials
  secret:
    secretName: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{- define "pgo.volumeMounts" -}}
{{- $root := .root }}
- name: tmp
  mountPath: /tmp
- name: spicedb-model
  mountPath: {{ include "pgo.spicedbModelDir" $root }}/schema.zed
  subPath: schema.zed
  readOnly: true
- name: spicedb-model
  mountPath: {{ include "pgo.spicedbModelDir" $root }}/registry.yaml
  subPath: registry.yaml
  readOnly: true
{{- if include "pgo.spicedbCa" . }}
- name: spicedb-ca
  mountPath: /etc/policy-grant-operator/spicedb-ca
  readOnly: true
{{- end }}
{{- if .authenticates }}
{{- if not (has (include "pgo.jwksSource" $root) (list "url" "none")) }}
- name: jwks
  mountPath: /etc/policy-grant-operator/jwks
  readOnly: true
{{- end }}
{{- if $root.Values.auth.basicCredentialsSecret }}
- name: basic-credentials
  mountPath: /etc/policy-grant-operator/basic-credentials
  readOnly: true
{{- end }}
{{- end }}
{{- end }}

{{/*
A service's Deployment. Takes (dict "root" $ "component" "<component>" "values" <its values> "authenticates" <bool>
"autoscaled" <bool: an autoscaler owns the replica count> "automountToken" <bool> "spicedbClient" <bool: gets
SpiceDB's endpoint, key and CA>).
*/}}
{{- define "pgo.deployment" -}}
{{- $root := .root }}
{{- $v := .values }}
{{- /* 10 s: how long a stopping service lets requests in flight finish (DEFAULT_CLOSE_GRACE_MS). */}}
{{- $shutdown := add $v.preStopSleepSeconds ($v.drainSeconds | default 0) 10 }}
{{- if le (int $v.terminationGracePeriodSeconds) (int $shutdown) }}
{{- fail (printf "terminationGracePeriodSeconds of %s (%d) must exceed preStopSleepSeconds + drainSeconds + 10 s for requests in flight (%d): the kubelet kills the container when it runs out" .component (int $v.terminationGracePeriodSeconds) (int $shutdown)) }}
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "pgo.componentName" . }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
spec:
  {{- if not .autoscaled }}
  replicas: {{ $v.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  {{- with $v.strategy }}
  strategy:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "pgo.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "pgo.labels" . | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/settings: {{ include (print $root.Template.BasePath "/settings-configmap.yaml") $root | sha256sum }}
        checksum/spicedb-model: {{ include (print $root.Template.BasePath "/spicedb-model-configmap.yaml") $root | sha256sum }}
        {{- /* SpiceDB's endpoint and key reach the services as environment variables: a change needs new pods. */}}
        {{- $spicedbSecret := include (print $root.Template.BasePath "/spicedb-secret.yaml") $root | trim }}
        {{- if and .spicedbClient $spicedbSecret }}
        checksum/spicedb-secret: {{ $spicedbSecret | sha256sum }}
        {{- end }}
        {{- /* So are the page token keys: a rotation in the values rolls the decision service. */}}
        {{- if and (eq .component "decision-service") $root.Values.decisionService.pageTokens.keys }}
        checksum/page-token-keys: {{ $root.Values.decisionService.pageTokens.keys | toJson | sha256sum }}
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
      serviceAccountName: {{ include "pgo.componentName" . }}
      automountServiceAccountToken: {{ .automountToken }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ .component }}
          image: {{ include "pgo.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .component }}]
          ports:
            - name: http
              containerPort: {{ $v.port }}
              protocol: TCP
          {{- if $v.preStopSleepSeconds }}
          lifecycle:
            preStop:
              sleep:
                seconds: {{ $v.preStopSleepSeconds }}
          {{- end }}
          envFrom:
            - configMapRef:
                name: {{ include "pgo.settingsName" $root }}
          env:
            {{- include "pgo.env" . | trim | nindent 12 }}
          # Liveness starts counting once the process has served /healthz/live once: a start slowed by a busy
          # node (module loading, migrations) is not mistaken for a hung process.
          startupProbe:
            httpGet:
              path: /healthz/live
              port: http
            periodSeconds: 2
            timeoutSeconds: 2
            failureThreshold: 150
          livenessProbe:
            httpGet:
              path: /healthz/live
              port: http
            periodSeconds: 10
            timeoutSeconds: 2
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /healthz/ready
              port: http
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 2
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            {{- include "pgo.volumeMounts" . | trim | nindent 12 }}
      volumes:
        {{- include "pgo.volumes" . | trim | nindent 8 }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- if $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml $v.topologySpreadConstraints | nindent 8 }}
      {{- else if $root.Values.defaultTopologySpread }}
      topologySpreadConstraints:
        {{- range list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
        - maxSkew: 1
          topologyKey: {{ . }}
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "pgo.selectorLabels" $ | nindent 14 }}
          matchLabelKeys: [pod-template-hash]
        {{- end }}
      {{- end }}
{{- end }}

{{/* A service's ClusterIP Service on its http port; takes the component dict. */}}
{{- define "pgo.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "pgo.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "pgo.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ .values.port }}
      targetPort: http
      protocol: TCP
{{- end }}

{{/* A service's ServiceAccount; takes the component dict. */}}
{{- define "pgo.serviceAccount" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "pgo.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
  {{- with .values.serviceAccountAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: false
{{- end }}

{{/*
A PodDisruptionBudget for a service whose values have podDisruptionBudget (minAvailable when set, else
maxUnavailable); takes the component dict. The schema refuses maxUnavailable 0 and percentages that block every
eviction; a minAvailable count at or above the replica count would too, so it fails here.
*/}}
{{- define "pgo.podDisruptionBudget" -}}
{{- $pdb := .values.podDisruptionBudget }}
{{- if $pdb.enabled }}
{{- $minimum := $pdb.minAvailable }}
{{- $replicas := .values.replicas }}
{{- if .autoscaled }}{{ $replicas = .values.autoscaling.minReplicas }}{{ end }}
{{- if and (not (kindIs "string" $minimum)) (ge (int $minimum) (int $replicas)) }}
{{- fail (printf "podDisruptionBudget.minAvailable of the %s (%d) must be below its replica count (%d): otherwise no pod can ever be evicted (node drains hang)" .component (int $minimum) (int $replicas)) }}
{{- end }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "pgo.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
spec:
  {{- if ne (toString $minimum) "" }}
  minAvailable: {{ $minimum }}
  {{- else }}
  maxUnavailable: {{ $pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "pgo.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{/*
RBAC of a service: a ClusterRole (cluster-wide reads) and a Role in the release namespace (writes there), each
with its binding to the service's ServiceAccount, when it has rules. Takes the component dict plus "clusterRules"
and "namespaceRules": PolicyRule lists as YAML text (empty: no such role).
*/}}
{{- define "pgo.rbac" -}}
{{- if .clusterRules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "pgo.componentName" . }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
rules:
  {{- .clusterRules | trim | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "pgo.componentName" . }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "pgo.componentName" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "pgo.componentName" . }}
    namespace: {{ .root.Release.Namespace }}
{{- end }}
{{- if .namespaceRules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "pgo.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
rules:
  {{- .namespaceRules | trim | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "pgo.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "pgo.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "pgo.componentName" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "pgo.componentName" . }}
    namespace: {{ .root.Release.Namespace }}
{{- end }}
{{- end }}

{{/* A duration value such as 500ms, 15s, 2m or 1h in milliseconds (one unit; the schema allows no other form). */}}
{{- define "pgo.durationMs" -}}
{{- $number := regexFind "^[0-9]+" . | int }}
{{- $unit := trimPrefix (toString $number) . }}
{{- mul $number (get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000) $unit) }}
{{- end }}

{{- /*
An Ingress or HTTPRoute puts a proxy in front of the services: without trustProxy every caller would share
the proxy's address, and the per-address limit of failed authentications would count them all as one.
*/}}
{{- define "pgo.requireTrustProxy" -}}
{{- if not .Values.trustProxy }}
{{- fail (printf "%s needs trustProxy: behind a proxy every caller shares its address; set trustProxy to the proxies' addresses or subnets and trustProxyFrom to their pods (chart README, \"Client addresses behind a proxy\")" .kind) }}
{{- end }}
{{- end }}

{{/*
The username the ACL API authenticates to Kubernetes as (its ServiceAccount): the only requester the grant
admission policies let set the API's marks, and whose stamped changes the controller's audit leaves to the API.
*/}}
{{- define "pgo.aclApiUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "pgo.componentName" (dict "root" . "component" "acl-api")) }}
{{- end }}

import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe, which needs it
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(globalThis.crypto);

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const validity = {
  notBefore: new Date(Date.now() - 60_000),
  notAfter: new Date(Date.now() + 365 * 86_400_000),
};

export interface PemPair {
  certificate: string;
  privateKey: string;
}

export interface CertificateAuthority extends PemPair {
  issue(request: LeafRequest): Promise<PemPair>;
}

export interface LeafRequest {
  commonName: string;
  organisations?: string[];
  usage: 'server' | 'client';
  ipAddresses?: string[];
  dnsNames?: string[];
}

export async function createCertificateAuthority(commonName: string): Promise<CertificateAuthority> {
  const keys = await generateKeys();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: algorithm,
    ...validity,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const ca = { certificate: certificate.toString('pem'), privateKey: await privateKeyPem(keys.privateKey) };
  return { ...ca, issue: (request) => issueLeaf(certificate, keys.privateKey, request) };
}

async function issueLeaf(
  caCert: x509.X509Certificate,
  caKey: CryptoKey,
  request: LeafRequest,
): Promise<PemPair> {
  const keys = await generateKeys();
  const subject = [`CN=${request.commonName}`, ...(request.organisations ?? []).map((o) => `O=${o}`)].join(
    ', ',
  );
  const usage =
    request.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth;
  const names = [
    ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
  ];
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject,
    issuer: caCert.subject,
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: algorithm,
    ...validity,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([usage]),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
    ],
  });
  return { certificate: certificate.toString('pem'), privateKey: await privateKeyPem(keys.privateKey) };
}

/** A key pair for signing ServiceAccount tokens: private key (PKCS#8) and public key (SPKI), PEM. */
export async function createSigningKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  const keys = await generateKeys();
  const spki = await webcrypto.subtle.exportKey('spki', keys.publicKey);
  return {
    privateKey: await privateKeyPem(keys.privateKey),
    publicKey: x509.PemConverter.encode(spki, 'PUBLIC KEY'),
  };
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function randomSerial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
}

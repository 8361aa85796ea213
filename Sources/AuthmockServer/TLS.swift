import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate and its private key, PEM-encoded.
public struct TLSIdentity: Sendable, Equatable {
    public var certificatePEM: String
    public var privateKeyPEM: String

    public init(certificatePEM: String, privateKeyPEM: String) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// Reads a certificate (chain) and key from PEM files.
    public static func load(certificate: String, key: String) throws -> TLSIdentity {
        guard let cert = try? String(contentsOfFile: certificate, encoding: .utf8) else {
            throw TLSSetupError("cannot read the certificate file \(certificate)")
        }
        guard let key = try? String(contentsOfFile: key, encoding: .utf8) else { throw TLSSetupError("cannot read the key file \(key)") }
        return TLSIdentity(certificatePEM: cert, privateKeyPEM: key)
    }

    /// A self-signed certificate for `localhost` and `127.0.0.1` (plus any
    /// extra names), valid for a year, so a simulator or emulator can be
    /// told to trust it. P-256, as every mobile TLS stack accepts.
    public static func selfSigned(extraNames: [String] = []) throws -> TLSIdentity {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("authmock local development") }
        var names: [GeneralName] = [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]
        for extra in extraNames {
            if let ip = IPv4Address(extra) {
                names.append(.ipAddress(ASN1OctetString(contentBytes: ip.bytes[...])))
            } else {
                names.append(.dnsName(extra))
            }
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: .init(key))
        return TLSIdentity(certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }

    /// The server side TLS configuration for this identity.
    func serverConfiguration() throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { NIOSSLCertificateSource.certificate($0) }
        guard !chain.isEmpty else { throw TLSSetupError("the certificate file holds no PEM certificate") }
        let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
    }
}

public struct TLSSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Dotted-quad IPv4, for certificate subject names.
struct IPv4Address {
    let bytes: [UInt8]
    init?(_ text: String) {
        let parts = text.split(separator: ".").compactMap { UInt8($0) }
        guard parts.count == 4, text.split(separator: ".").count == 4 else { return nil }
        bytes = parts
    }
}

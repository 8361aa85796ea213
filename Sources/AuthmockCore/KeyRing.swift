import Crypto
import CryptoExtras
public import Foundation
public import JWTKit
import Synchronization

/// How tokens are signed (`--signing-alg`). HS256 is the design's default:
/// one shared secret, nothing published. RS256 and ES256 sign with a key
/// pair whose public half the JWKS publishes, as OpenID Connect providers do.
public enum SigningAlgorithm: String, Sendable, CaseIterable, Codable {
    case hs256 = "HS256"
    case rs256 = "RS256"
    case es256 = "ES256"

    public var isAsymmetric: Bool { self != .hs256 }
}

/// The key pairs of RS256/ES256 as a store keeps them (docs/state.md): the
/// private keys in PEM, so a restarted server, or another replica on the
/// same database, signs and verifies with the same keys. `version` grows
/// with every rotation, which is how a replica notices one made elsewhere.
public struct KeptKeys: Codable, Sendable, Equatable {
    public struct Key: Codable, Sendable, Equatable {
        public var kid: String
        public var pem: String
        /// End of a retired key's grace (seconds since 1970); nil for the current key.
        public var retiredUntil: Double?
    }
    public var algorithm: SigningAlgorithm
    public var version: Int
    /// Current key first.
    public var keys: [Key]

    /// A rotation: `fresh` becomes current, the current key is retired until
    /// `now + grace`, and keys whose grace already ended are forgotten.
    func rotated(to fresh: Key, at now: Date, grace: Double) -> KeptKeys {
        var next = self
        next.version += 1
        next.keys.removeAll { $0.retiredUntil.map { $0 <= now.timeIntervalSince1970 } ?? false }
        for index in next.keys.indices where next.keys[index].retiredUntil == nil {
            next.keys[index].retiredUntil = now.addingTimeInterval(grace).timeIntervalSince1970
        }
        next.keys.insert(fresh, at: 0)
        return next
    }

    /// The form a store writes (JSON).
    public var encoded: String { String(decoding: try! JSONEncoder().encode(self), as: UTF8.self) }
}

extension KeptKeys {
    /// Read back from `encoded` (an extension, so the memberwise initializer
    /// stays). A list without a current key, or with a retirement that is no
    /// time, is refused: the key ring could sign nothing with it.
    public init(encoded: String) throws {
        self = try JSONDecoder().decode(KeptKeys.self, from: Data(encoded.utf8))
        guard let current = keys.first, current.retiredUntil == nil else { throw TokenStoreError("it lists no current key") }
        guard keys.allSatisfy({ $0.retiredUntil?.isFinite ?? true }) else { throw TokenStoreError("a retired key's retiredUntil is not a time") }
    }
}

/// The keys tokens are signed and verified with: the current key, and keys a
/// rotation retired, which still verify (and stay in the JWKS) until their
/// grace ends on the server clock; then they are dropped, and tokens they
/// signed fail as `wrong-signature`. HS256 has one key and does not rotate:
/// its secret is shared with whoever verifies tokens, not published.
/// RS256/ES256 keys come from `KeptKeys`, which the token store keeps.
public final class KeyRing: Sendable {
    public let algorithm: SigningAlgorithm

    struct Key: Sendable {
        let id: String
        let signer: Signer
        /// The JWK of the public half (RS256, ES256).
        let publicJWK: [String: String]?
        /// End of the grace of a retired key; nil for the current key.
        var retiredUntil: Date?
    }

    enum Signer: Sendable {
        case hmac(SymmetricKey)
        case rsa(JWTKit.Insecure.RSA.PrivateKey)
        case ecdsa(ES256PrivateKey)
    }

    private struct State {
        var keys: [Key]
        var collection: JWTKeyCollection
        /// What a store keeps of these keys; nil for HS256.
        var kept: KeptKeys?
        /// Bumped by every change: a change built from an older list is built again.
        var generation = 0
    }
    private let state: Mutex<State>
    /// When the first retired key's grace ends (seconds since 1970; infinity
    /// while none is retired), kept beside `state` so that the check before
    /// every verification takes no lock.
    private let firstGraceEnd = AtomicDouble(.infinity)

    /// HS256 with `secret`.
    public init(hmac secret: SigningKey) async {
        self.algorithm = .hs256
        let key = Key(id: secret.id, signer: .hmac(secret.key), publicJWK: nil)
        self.state = Mutex(State(keys: [key], collection: await Self.collection(of: [key])))
    }

    /// RS256 or ES256 with `kept` keys: a store's, or new ones (`KeyRing.newKeys`).
    public init(kept: KeptKeys) async throws {
        self.algorithm = kept.algorithm
        let keys = try kept.keys.map { try Self.key(kept.algorithm, $0) }
        self.state = Mutex(State(keys: keys, collection: await Self.collection(of: keys), kept: kept))
        firstGraceEnd.store(Self.firstGraceEnd(of: keys))
    }

    /// What a store keeps of these keys (nil for HS256, whose secret is kept as the signing key).
    public var kept: KeptKeys? { state.withLock { $0.kept } }

    /// Grows with every rotation; 0 for HS256.
    public var version: Int { state.withLock { $0.kept?.version ?? 0 } }

    /// Installs keys kept by the store when they are newer than these: a
    /// rotation made through another replica.
    public func install(_ kept: KeptKeys) async throws {
        guard kept.algorithm == algorithm, kept.version > version else { return }
        let keys = try kept.keys.map { try Self.key(kept.algorithm, $0) }
        let collection = await Self.collection(of: keys)
        state.withLock { state in
            guard kept.version > (state.kept?.version ?? 0) else { return }
            state = State(keys: keys, collection: collection, kept: kept, generation: state.generation + 1)
            firstGraceEnd.store(Self.firstGraceEnd(of: keys))
        }
    }

    /// The `kid` new tokens carry.
    public var currentKeyID: String { state.withLock { $0.keys.first { $0.retiredUntil == nil }!.id } }

    /// Whether `kid` names a key that still verifies at `now`.
    public func verifies(kid: String?, at now: Date) -> Bool {
        state.withLock { state in state.keys.contains { $0.id == kid && ($0.retiredUntil.map { $0 > now } ?? true) } }
    }

    public func sign(_ payload: some JWTPayload, header: JWTHeader = JWTHeader()) async throws -> String {
        let (collection, kid) = state.withLock { ($0.collection, $0.keys.first { $0.retiredUntil == nil }!.id) }
        return try await collection.sign(payload, kid: JWKIdentifier(string: kid), header: header)
    }

    public func verify<Payload: JWTPayload>(_ token: String, as type: Payload.Type) async throws -> Payload {
        let collection = state.withLock { $0.collection }
        return try await collection.verify(token, as: type)
    }

    /// The JSON Web Key Set (RFC 7517) of the keys that verify at `now`:
    /// current first. Empty for HS256, whose secret is not published.
    public func jwks(at now: Date) -> [[String: String]] {
        state.withLock { state in
            state.keys.filter { $0.retiredUntil.map { $0 > now } ?? true }.compactMap(\.publicJWK)
        }
    }

    /// A summary for the control API: each key's id and, when retired, the end of its grace.
    public func listing() -> [(id: String, retiredUntil: Date?)] {
        state.withLock { $0.keys.map { ($0.id, $0.retiredUntil) } }
    }

    /// Drops keys whose grace ended by `now`; true when one was dropped
    /// (cached verifications of its tokens must go too). The kept keys stay
    /// as they are: the next rotation forgets them there.
    public func dropExpired(at now: Date) async -> Bool {
        guard hasExpired(at: now) else { return false }
        while true {
            var (keys, generation) = state.withLock { ($0.keys, $0.generation) }
            let count = keys.count
            keys.removeAll { $0.retiredUntil.map { $0 <= now } ?? false }
            // jwt-kit's collection is an actor: built outside the lock. A drop
            // racing an install never undoes it: a list that changed meanwhile
            // is edited again.
            let collection = await Self.collection(of: keys)
            let installed = state.withLock { state in
                guard state.generation == generation else { return false }
                state.keys = keys
                firstGraceEnd.store(Self.firstGraceEnd(of: keys))
                state.collection = collection
                state.generation += 1
                return true
            }
            if installed { return keys.count < count }
        }
    }

    /// Whether a retired key's grace ended by `now`. Asked before every
    /// verification, so it is synchronous and allocates nothing; only a
    /// due key takes the async `dropExpired`.
    public func hasExpired(at now: Date) -> Bool {
        firstGraceEnd.load() <= now.timeIntervalSince1970
    }

    private static func firstGraceEnd(of keys: [Key]) -> Double {
        keys.compactMap { $0.retiredUntil?.timeIntervalSince1970 }.min() ?? .infinity
    }

    private static func collection(of keys: [Key]) async -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        for key in keys {
            let kid = JWKIdentifier(string: key.id)
            switch key.signer {
            case .hmac(let secret): await collection.add(hmac: HMACKey(key: secret), digestAlgorithm: .sha256, kid: kid)
            case .rsa(let rsa): await collection.add(rsa: rsa, digestAlgorithm: .sha256, kid: kid)
            case .ecdsa(let ecdsa): await collection.add(ecdsa: ecdsa, kid: kid)
            }
        }
        return collection
    }

    /// A first key pair, to keep when the store has none.
    public static func newKeys(_ algorithm: SigningAlgorithm) throws -> KeptKeys {
        KeptKeys(algorithm: algorithm, version: 1, keys: [try newKey(algorithm)])
    }

    /// A new key pair; its `kid` is the RFC 7638 thumbprint's first 16 hex digits.
    static func newKey(_ algorithm: SigningAlgorithm) throws -> KeptKeys.Key {
        let pem: String
        switch algorithm {
        case .hs256: preconditionFailure("HS256 keys come from the configured secret")
        case .rs256: pem = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        case .es256: pem = ES256PrivateKey().pemRepresentation
        }
        let jwk = try publicJWK(signer(algorithm, pem: pem))
        // RFC 7638: the required members, in lexicographic order, no spaces.
        let members = jwk.keys.sorted().map { "\"\($0)\":\"\(jwk[$0]!)\"" }.joined(separator: ",")
        let kid = SHA256.hash(data: Data(("{" + members + "}").utf8)).prefix(8).hexString
        return KeptKeys.Key(kid: kid, pem: pem, retiredUntil: nil)
    }

    private static func signer(_ algorithm: SigningAlgorithm, pem: String) throws -> Signer {
        switch algorithm {
        case .hs256: preconditionFailure("HS256 keys come from the configured secret")
        case .rs256: return .rsa(try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(pemRepresentation: pem)))
        case .es256: return .ecdsa(try ES256PrivateKey(pem: pem))
        }
    }

    /// The RFC 7638 required members of the public half.
    private static func publicJWK(_ signer: Signer) throws -> [String: String] {
        switch signer {
        case .hmac: preconditionFailure("HS256 keys are not published")
        case .rsa(let key):
            let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
            return ["kty": "RSA", "n": modulus.base64URLEncodedString(), "e": exponent.base64URLEncodedString()]
        case .ecdsa(let key):
            guard let (x, y) = key.parameters else { throw SettingsError("the P-256 key has no public coordinates") }
            return ["kty": "EC", "crv": "P-256", "x": x, "y": y]
        }
    }

    private static func key(_ algorithm: SigningAlgorithm, _ kept: KeptKeys.Key) throws -> Key {
        let signer = try signer(algorithm, pem: kept.pem)
        var jwk = try publicJWK(signer)
        jwk["kid"] = kept.kid
        jwk["alg"] = algorithm.rawValue
        jwk["use"] = "sig"
        return Key(id: kept.kid, signer: signer, publicJWK: jwk, retiredUntil: kept.retiredUntil.map(Date.init(timeIntervalSince1970:)))
    }
}

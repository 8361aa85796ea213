import Crypto
public import Foundation

/// Token state in SQL tables (docs/state.md): every decision is one
/// transaction that reads the rows it decides on, locked, and writes the
/// outcome, so of two concurrent uses of one refresh token, in one process
/// or in several, exactly one rotates it and the other sees the rotation.
/// The decisions are `TokenRules`, the same as in memory.
public final class SQLTokenStore: TokenStore {
    public let db: any SQLDatabase
    /// Starts every table name (`authmock_` unless a caller keeps several
    /// stores apart in one database: the runner's case servers).
    public let tablePrefix: String

    /// Creates the tables when missing. Replicas starting together may race
    /// on PostgreSQL's catalog (a unique violation), so it tries a few times.
    public init(_ db: any SQLDatabase, tablePrefix: String = "authmock_") async throws {
        self.db = db
        self.tablePrefix = tablePrefix
        for attempt in 1...5 {
            do {
                try await transaction { tx in
                    for statement in Self.schema { _ = try await tx.rows(statement, []) }
                }
                // Tables of an earlier version lack these columns; where one exists this fails, harmlessly.
                try? await transaction { tx in _ = try await tx.rows("ALTER TABLE authmock_codes ADD COLUMN nonce TEXT", []) }
                try? await transaction { tx in _ = try await tx.rows("ALTER TABLE authmock_refresh ADD COLUMN successor_id TEXT", []) }
                return
            } catch  where attempt < 5 {
                try await Task.sleep(for: .milliseconds(50 * attempt))
            }
        }
    }

    public var name: String { db.name }

    /// `db.transaction`, with the table names of this store.
    func transaction<T: Sendable>(_ body: @Sendable @escaping (any SQLTransaction) async throws -> T) async throws -> T {
        guard tablePrefix != "authmock_" else { return try await db.transaction(body) }
        let prefix = tablePrefix
        return try await db.transaction { tx in try await body(PrefixedTransaction(base: tx, prefix: prefix)) }
    }

    /// Drops this store's tables (the runner's throwaway case stores).
    public func discard() async throws {
        try await transaction { tx in
            for table in ["access", "refresh", "families", "codes", "meta"] { _ = try await tx.rows("DROP TABLE IF EXISTS authmock_" + table, []) }
        }
    }
    public var isShared: Bool { db.isShared }

    /// The tables. Times are seconds since 1970 (DOUBLE PRECISION, REAL in SQLite).
    static var schema: [String] {
        [
            "CREATE TABLE IF NOT EXISTS authmock_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS authmock_families (id TEXT PRIMARY KEY, subject TEXT NOT NULL, client_id TEXT NOT NULL, \
            scope TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION)
            """,
            """
            CREATE TABLE IF NOT EXISTS authmock_refresh (id TEXT PRIMARY KEY, value TEXT NOT NULL UNIQUE, family_id TEXT NOT NULL, \
            issued_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, state_at DOUBLE PRECISION, \
            successor_id TEXT)
            """,
            "CREATE INDEX IF NOT EXISTS authmock_refresh_family ON authmock_refresh (family_id)",
            """
            CREATE TABLE IF NOT EXISTS authmock_access (jti TEXT PRIMARY KEY, family_id TEXT, subject TEXT NOT NULL, client_id TEXT NOT NULL, \
            scope TEXT NOT NULL, issued_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, lifetime DOUBLE PRECISION NOT NULL, \
            revoked_at DOUBLE PRECISION, tail TEXT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS authmock_access_family ON authmock_access (family_id)",
            """
            CREATE TABLE IF NOT EXISTS authmock_codes (code TEXT PRIMARY KEY, client_id TEXT NOT NULL, subject TEXT NOT NULL, scope TEXT NOT NULL, \
            redirect_uri TEXT, challenge TEXT, challenge_method TEXT, expires_at DOUBLE PRECISION NOT NULL, used BIGINT NOT NULL, issued_family TEXT, \
            nonce TEXT)
            """,
        ]
    }

    /// `FOR UPDATE` where other processes may write between a read and the
    /// write it decides (SQLite's `BEGIN IMMEDIATE` already excludes them).
    private var locked: String { db.isShared ? " FOR UPDATE" : "" }

    // MARK: Signing key and clock

    public func adoptSigningKey(_ configured: SigningKey) async throws -> SigningKey {
        let secret = configured.key.withUnsafeBytes { Data($0).base64EncodedString() }
        let kept: String = try await transaction { tx in
            if !configured.isRandom {
                try await Self.setMeta(tx, "signing_key", secret)
                return secret
            }
            // Insert-if-absent, then read: of replicas starting together, one key wins.
            _ = try await tx.rows(
                "INSERT INTO authmock_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", [.text("signing_key"), .text(secret)])
            return try await Self.meta(tx, "signing_key") ?? secret
        }
        guard kept != secret, let data = Data(base64Encoded: kept) else { return configured }
        return SigningKey(key: .init(data: data), isRandom: false)
    }

    public func sharedSettings() async throws -> SharedSettings {
        let rows = try await transaction { tx in
            try await tx.rows("SELECT key, value FROM authmock_meta WHERE key IN ('clock_offset', 'keys_version')", [])
        }
        var settings = SharedSettings()
        for row in rows {
            let text = row.last?.text ?? ""
            switch row.first?.text {
            case "clock_offset":
                // The control API keeps the offset within 100 years; a stored value
                // outside that (or no number) was not written by authmock.
                guard let offset = Double(text), offset.isFinite, abs(offset) <= VirtualClock.maxOffsetSeconds else {
                    throw TokenStoreError(
                        "the stored clock offset '\(text.prefix(40))' is not a number of seconds within 100 years (authmock_meta, key clock_offset)")
                }
                settings.clockOffset = offset
            case "keys_version":
                guard let version = Int(text) else {
                    throw TokenStoreError("the stored keys version '\(text.prefix(40))' is not a whole number (authmock_meta, key keys_version)")
                }
                settings.keysVersion = version
            default: break
            }
        }
        return settings
    }

    // MARK: Key pairs (RS256, ES256)

    public func keptKeys() async throws -> KeptKeys? {
        try await transaction { tx in try await self.keptKeys(tx) }
    }

    public func adoptKeys(_ fresh: KeptKeys) async throws -> KeptKeys {
        try await transaction { tx in
            // Replicas starting together: the first insert wins, the others read it.
            for (key, value) in [("keys", fresh.encoded), ("keys_version", String(fresh.version))] {
                _ = try await tx.rows(
                    "INSERT INTO authmock_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", [.text(key), .text(value)])
            }
            if let kept = try await self.keptKeys(tx, lock: true), kept.algorithm == fresh.algorithm { return kept }
            // Keys of another algorithm (the server was restarted with another
            // --signing-alg): replaced, with a version above theirs.
            var replacement = fresh
            replacement.version = max(fresh.version, try await Self.meta(tx, "keys_version").flatMap { Int($0) } ?? 0) + 1
            try await Self.keep(tx, replacement)
            return replacement
        }
    }

    public func updateKeys(from current: KeptKeys, _ edit: @escaping @Sendable (KeptKeys) -> KeptKeys) async throws -> KeptKeys {
        try await transaction { tx in
            let next = edit(try await self.keptKeys(tx, lock: true) ?? current)
            try await Self.keep(tx, next)
            return next
        }
    }

    private func keptKeys(_ tx: any SQLTransaction, lock: Bool = false) async throws -> KeptKeys? {
        let sql = "SELECT value FROM authmock_meta WHERE key = 'keys'" + (lock ? locked : "")
        guard let text = try await tx.rows(sql, []).first?.first?.text else { return nil }
        do {
            return try KeptKeys(encoded: text)
        } catch {
            throw TokenStoreError("the kept signing keys cannot be read: \(error)")
        }
    }

    private static func keep(_ tx: any SQLTransaction, _ keys: KeptKeys) async throws {
        try await setMeta(tx, "keys", keys.encoded)
        try await setMeta(tx, "keys_version", String(keys.version))
    }

    public func setClockOffset(_ seconds: Double) async throws {
        try await transaction { tx in try await Self.setMeta(tx, "clock_offset", String(seconds)) }
    }

    static func meta(_ tx: any SQLTransaction, _ key: String) async throws -> String? {
        try await tx.rows("SELECT value FROM authmock_meta WHERE key = ?", [.text(key)]).first?.first?.text
    }

    static func setMeta(_ tx: any SQLTransaction, _ key: String, _ value: String) async throws {
        _ = try await tx.rows(
            "INSERT INTO authmock_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [.text(key), .text(value)])
    }

    // MARK: Records

    private static func insert(_ tx: any SQLTransaction, _ family: FamilyRecord) async throws {
        _ = try await tx.rows(
            "INSERT INTO authmock_families (id, subject, client_id, scope, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(family.id), .text(family.subject), .text(family.clientID), .text(family.scope), SQLValue(family.createdAt),
                SQLValue(family.revokedAt),
            ])
    }

    private static func insert(_ tx: any SQLTransaction, _ record: RefreshRecord) async throws {
        _ = try await tx.rows(
            "INSERT INTO authmock_refresh (id, value, family_id, issued_at, expires_at, state, state_at) VALUES (?, ?, ?, ?, ?, 'live', NULL)",
            [.text(record.id), .text(record.value), .text(record.familyID), SQLValue(record.issuedAt), SQLValue(record.expiresAt)])
    }

    private static func insert(_ tx: any SQLTransaction, _ record: AccessRecord) async throws {
        _ = try await tx.rows(
            """
            INSERT INTO authmock_access (jti, family_id, subject, client_id, scope, issued_at, expires_at, lifetime, revoked_at, tail) \
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
            """,
            [
                .text(record.jti), SQLValue(record.familyID), .text(record.subject), .text(record.clientID), .text(record.scope),
                SQLValue(record.issuedAt), SQLValue(record.expiresAt), .real(record.lifetime), .text(record.tokenTail),
            ])
    }

    static let familyColumns = "id, subject, client_id, scope, created_at, revoked_at"
    static func family(_ row: [SQLValue]) -> FamilyRecord {
        let id = row[0].text ?? ""
        return FamilyRecord(
            id: id, owner: TokenOwner(familyID: id, subject: row[1].text ?? "", clientID: row[2].text ?? "", scope: row[3].text ?? ""),
            createdAt: row[4].date ?? .distantPast, revokedAt: row[5].date)
    }

    static let refreshColumns = "id, value, family_id, issued_at, expires_at, state, state_at, successor_id"
    static func refresh(_ row: [SQLValue]) -> RefreshRecord {
        let at = row[6].date ?? .distantPast
        let state: RefreshRecord.State =
            switch row[5].text {
            case "rotated": .rotated(at: at)
            case "revoked": .revoked(at: at)
            default: .live
            }
        return RefreshRecord(
            key: TokenID(row[0].text ?? ""), value: row[1].text ?? "", familyID: row[2].text ?? "",
            issuedAt: row[3].date ?? .distantPast, expiresAt: row[4].date ?? .distantPast, state: state, successor: row[7].text.map(TokenID.init))
    }

    static let accessColumns = "jti, family_id, subject, client_id, scope, issued_at, expires_at, lifetime, revoked_at, tail"
    static func access(_ row: [SQLValue]) -> AccessRecord {
        AccessRecord(
            key: TokenID(row[0].text ?? ""),
            owner: TokenOwner(familyID: row[1].text, subject: row[2].text ?? "", clientID: row[3].text ?? "", scope: row[4].text ?? ""),
            issuedAt: row[5].date ?? .distantPast, expiresAt: row[6].date ?? .distantPast, lifetime: row[7].real ?? 0,
            revokedAt: row[8].date, tokenTail: row[9].text ?? "")
    }

    private func family(_ tx: any SQLTransaction, _ id: String, lock: Bool = false) async throws -> FamilyRecord? {
        try await tx.rows("SELECT \(Self.familyColumns) FROM authmock_families WHERE id = ?" + (lock ? locked : ""), [.text(id)]).first.map(
            Self.family)
    }

    func refresh(_ tx: any SQLTransaction, value: String, lock: Bool = false) async throws -> RefreshRecord? {
        try await tx.rows("SELECT \(Self.refreshColumns) FROM authmock_refresh WHERE value = ?" + (lock ? locked : ""), [.text(value)]).first.map(
            Self.refresh)
    }

    func refresh(_ tx: any SQLTransaction, id: TokenID) async throws -> RefreshRecord? {
        try await tx.rows("SELECT \(Self.refreshColumns) FROM authmock_refresh WHERE id = ?", [.text(id.text)]).first.map(Self.refresh)
    }

    static func revokeFamily(_ tx: any SQLTransaction, _ id: String, at now: Date) async throws {
        _ = try await tx.rows("UPDATE authmock_families SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [SQLValue(now), .text(id)])
    }

    // MARK: Issuing and using tokens

    public func createLogin(_ login: NewLogin) async throws {
        try await transaction { tx in
            try await Self.insert(tx, login.family)
            try await Self.insert(tx, login.refresh)
            try await Self.insert(tx, login.access)
        }
    }

    public func createAccess(_ record: AccessRecord) async throws {
        try await transaction { tx in try await Self.insert(tx, record) }
    }

    public func exchange(_ exchange: RefreshExchange, mint: TokenMint, sign: @escaping AccessSigner) async throws -> ExchangeOutcome {
        try await transaction { tx in
            let now = exchange.now
            // The token's row first, then its login's: every path locks in this order.
            let record = try await self.refresh(tx, value: exchange.value, lock: true)
            let verdict: TokenRules.Exchange
            let familyID: String?
            if let record {
                let family = try await self.family(tx, record.familyID, lock: true)
                let successor =
                    try await TokenRules.successorToRead(record, settings: mint.settings).asyncMap { try await self.refresh(tx, id: $0) } ?? nil
                verdict = TokenRules.exchange(record, family: family, successor: successor, exchange, settings: mint.settings)
                familyID = record.familyID
            } else {
                let sealed = mint.seal.open(exchange.value)
                let family = try await sealed.asyncMap { try await self.family(tx, $0.family, lock: true) } ?? nil
                verdict = TokenRules.exchangeUnrecorded(sealed: sealed, family: family, exchange, settings: mint.settings)
                familyID = family?.id
            }
            switch verdict {
            case .fail(let failure, let revoke):
                if revoke, let familyID { try await Self.revokeFamily(tx, familyID, at: now) }
                return .failed(failure)
            case .successor(let family, let successor):
                let access = try await SignedAccess.make(mint.access(owner: family.owner, at: now), sign)
                try await Self.insert(tx, access.record)
                return .issued(access, next: successor, family: family)
            case .pass(let family, let retire):
                var next: RefreshRecord? = nil
                if exchange.rotate {
                    next = mint.refresh(owner: family.owner, at: now)
                    try await Self.insert(tx, next!)
                }
                if retire, let record {
                    _ = try await tx.rows(
                        "UPDATE authmock_refresh SET state = 'rotated', state_at = ?, successor_id = ? WHERE id = ?",
                        [SQLValue(now), SQLValue(next?.id), .text(record.id)])
                }
                let access = try await SignedAccess.make(mint.access(owner: family.owner, at: now), sign)
                try await Self.insert(tx, access.record)
                return .issued(access, next: next, family: family)
            }
        }
    }

    public func rotateAccess(familyID: String, now: Date, mint: TokenMint, sign: @escaping AccessSigner) async throws -> SignedAccess? {
        try await transaction { tx in
            guard let family = try await self.family(tx, familyID, lock: true), family.revokedAt == nil else { return nil }
            let access = try await SignedAccess.make(mint.access(owner: family.owner, at: now), sign)
            try await Self.insert(tx, access.record)
            return access
        }
    }

    public func accessState(jti: String, sid: String) async throws -> (record: AccessRecord?, familyRevoked: Bool) {
        let (record, revoked): (AccessRecord?, Bool) = try await transaction { tx in
            let record = try await tx.rows("SELECT \(Self.accessColumns) FROM authmock_access WHERE jti = ?", [.text(jti)]).first.map(Self.access)
            guard let family = record == nil ? sid : record?.familyID else { return (record, false) }
            let revoked = try await tx.rows("SELECT 1 FROM authmock_families WHERE id = ? AND revoked_at IS NOT NULL", [.text(family)])
            return (record, !revoked.isEmpty)
        }
        return (record, revoked)
    }

    public func refreshInfo(value: String, now: Date, grace: Int) async throws -> RefreshTokenInfo? {
        try await transaction { tx in
            guard let record = try await self.refresh(tx, value: value), let family = try await self.family(tx, record.familyID) else { return nil }
            return RefreshTokenInfo(record: record, family: family, at: now, grace: grace)
        }
    }

    public func revokeLogin(refreshValue: String, now: Date) async throws -> Bool {
        try await transaction { tx in
            guard let record = try await self.refresh(tx, value: refreshValue, lock: true) else { return false }
            try await Self.revokeFamily(tx, record.familyID, at: now)
            return true
        }
    }

    public func revokeAccess(jti: String, now: Date) async throws {
        try await transaction { tx in
            _ = try await tx.rows("UPDATE authmock_access SET revoked_at = ? WHERE jti = ?", [SQLValue(now), .text(jti)])
        }
    }

    // MARK: Authorization codes

    public func createCode(_ code: String, _ record: AuthorizationCodeRecord) async throws {
        try await transaction { tx in
            _ = try await tx.rows(
                """
                INSERT INTO authmock_codes (code, client_id, subject, scope, redirect_uri, challenge, challenge_method, expires_at, used, issued_family, \
                nonce) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?)
                """,
                [
                    .text(code), .text(record.clientID), .text(record.subject), .text(record.scope), SQLValue(record.redirectURI),
                    SQLValue(record.codeChallenge), SQLValue(record.codeChallengeMethod), SQLValue(record.expiresAt), SQLValue(record.nonce),
                ])
        }
    }

    public func redeemCode(_ code: String, _ redemption: CodeRedemption) async throws -> Result<AuthorizationCodeRecord, AuthorizationCodeFailure> {
        try await transaction { tx in
            let rows = try await tx.rows(
                """
                SELECT client_id, subject, scope, redirect_uri, challenge, challenge_method, expires_at, used, issued_family, nonce \
                FROM authmock_codes WHERE code = ?
                """ + self.locked, [.text(code)])
            guard let row = rows.first else { return .failure(.unknown) }
            let record = AuthorizationCodeRecord(
                clientID: row[0].text ?? "", subject: row[1].text ?? "", scope: row[2].text ?? "", redirectURI: row[3].text,
                codeChallenge: row[4].text, codeChallengeMethod: row[5].text, expiresAt: row[6].date ?? .distantPast,
                used: row[7].integer != 0, nonce: row[9].text, issuedFamily: row[8].text)
            if record.used {
                if let family = record.issuedFamily { try await Self.revokeFamily(tx, family, at: redemption.now) }
                return .failure(.used)
            }
            if let failure = TokenRules.failure(of: record, redemption) { return .failure(failure) }
            _ = try await tx.rows("UPDATE authmock_codes SET used = 1 WHERE code = ?", [.text(code)])
            return .success(record)
        }
    }

    public func setCodeFamily(_ code: String, family: String) async throws {
        try await transaction { tx in
            _ = try await tx.rows("UPDATE authmock_codes SET issued_family = ? WHERE code = ?", [.text(family), .text(code)])
        }
    }
}

private struct PrefixedTransaction: SQLTransaction {
    let base: any SQLTransaction
    let prefix: String

    func rows(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
        try await base.rows(sql.replacingOccurrences(of: "authmock_", with: prefix), binds)
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

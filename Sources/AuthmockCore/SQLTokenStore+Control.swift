public import Foundation

// What the control API reads and changes in the SQL tables: listings,
// expiry and revocation by selector, reset and pruning.
extension SQLTokenStore {

    /// `AND ...` narrowing a statement to `selector` (a NULL field matches all).
    private static func matching(_ selector: TokenSelector, id: String, family: String, subject: String) -> (String, [SQLValue]) {
        (
            " AND (CAST(? AS TEXT) IS NULL OR \(subject) = ?) AND (CAST(? AS TEXT) IS NULL OR \(family) = ?) AND (CAST(? AS TEXT) IS NULL OR \(id) = ?)",
            [
                SQLValue(selector.subject), SQLValue(selector.subject), SQLValue(selector.family), SQLValue(selector.family), SQLValue(selector.jti),
                SQLValue(selector.jti),
            ]
        )
    }

    private static let refreshSubject =
        "COALESCE((SELECT subject FROM authmock_families WHERE authmock_families.id = authmock_refresh.family_id), '')"

    public func expire(_ selector: TokenSelector, now: Date) async throws -> TokenChange {
        try await transaction { tx in
            try await Self.update(
                tx, selector, access: "SET expires_at = ? WHERE expires_at > ?", refresh: "SET expires_at = ? WHERE expires_at > ?",
                [SQLValue(now), SQLValue(now)])
        }
    }

    public func revoke(_ selector: TokenSelector, now: Date) async throws -> TokenChange {
        try await transaction { tx in
            let change = try await Self.update(
                tx, selector, access: "SET revoked_at = ? WHERE revoked_at IS NULL",
                refresh: "SET state = 'revoked', state_at = ? WHERE state <> 'revoked'", [SQLValue(now)])
            if selector.revokesLogin, let family = selector.family { try await Self.revokeFamily(tx, family, at: now) }
            return change
        }
    }

    /// Applies `access` to the selected access tokens and `refresh` to the
    /// selected refresh tokens (as the selector's kind says), each an
    /// `SET ... WHERE ...` whose placeholders `values` fill; how many changed.
    private static func update(
        _ tx: any SQLTransaction, _ selector: TokenSelector, access: String, refresh: String, _ values: [SQLValue]
    ) async throws -> TokenChange {
        var change = TokenChange(access: 0, refresh: 0)
        if selector.kind != .refresh {
            let (filter, binds) = matching(selector, id: "jti", family: "family_id", subject: "subject")
            change.access = try await tx.rows("UPDATE authmock_access " + access + filter + " RETURNING jti", values + binds).count
        }
        if selector.kind != .access {
            let (filter, binds) = matching(selector, id: "id", family: "family_id", subject: refreshSubject)
            change.refresh = try await tx.rows("UPDATE authmock_refresh " + refresh + filter + " RETURNING id", values + binds).count
        }
        return change
    }

    public func supersede(family: String, keep: TokenID, deadline: Date) async throws {
        try await transaction { tx in
            _ = try await tx.rows(
                "UPDATE authmock_access SET expires_at = ? WHERE family_id = ? AND jti <> ? AND expires_at > ?",
                [SQLValue(deadline), .text(family), .text(keep.text), SQLValue(deadline)])
        }
    }

    public func revokeEarlierAccess(family: String, keep: TokenID, now: Date) async throws {
        try await transaction { tx in
            // Issue time orders a login's tokens across replicas (each process counts its own sequence).
            _ = try await tx.rows(
                "UPDATE authmock_access SET revoked_at = ? WHERE family_id = ? AND jti <> ? AND revoked_at IS NULL "
                    + "AND issued_at <= (SELECT issued_at FROM authmock_access WHERE jti = ?)",
                [SQLValue(now), .text(family), .text(keep.text), .text(keep.text)])
        }
    }

    public func snapshot(now: Date) async throws -> TokenSnapshot {
        try await transaction { tx in
            let families = try await tx.rows("SELECT \(Self.familyColumns) FROM authmock_families", []).map(Self.family)
            let access = try await tx.rows("SELECT \(Self.accessColumns) FROM authmock_access", []).map(Self.access)
            let refresh = try await tx.rows("SELECT \(Self.refreshColumns) FROM authmock_refresh", []).map(Self.refresh)
            return TokenSnapshot(families: families, access: access, refresh: refresh, pruned: try await Self.pruned(tx), at: now)
        }
    }

    /// The rules of TokenPruning.swift, as statements.
    public func prune(now: Date, retention: Double, grace: Double) async throws -> PrunedCounts {
        try await transaction { tx in
            let horizon = SQLValue(now.addingTimeInterval(-retention))
            var removed = PrunedCounts(passes: 1)
            removed.access = try await tx.rows("DELETE FROM authmock_access WHERE issued_at + lifetime + 1 <= ? RETURNING jti", [horizon]).count
            removed.refresh = try await tx.rows(
                "DELETE FROM authmock_refresh WHERE (state = 'rotated' AND state_at + ? <= ?) OR expires_at <= ? RETURNING id",
                [.real(grace), horizon, horizon]
            ).count
            // A login's rotated tokens beyond its newest `TokenRules.rotatedKept`, as the memory store drops them at rotation.
            removed.refresh += try await tx.rows(
                """
                DELETE FROM authmock_refresh WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER \
                (PARTITION BY family_id ORDER BY state_at DESC) AS n FROM authmock_refresh WHERE state = 'rotated') AS ranked WHERE n > ?) \
                RETURNING id
                """, [.integer(Int64(TokenRules.rotatedKept))]
            ).count
            removed.families = try await tx.rows(
                """
                DELETE FROM authmock_families WHERE created_at <= ? \
                AND NOT EXISTS (SELECT 1 FROM authmock_refresh WHERE authmock_refresh.family_id = authmock_families.id) RETURNING id
                """, [horizon]
            ).count
            removed.codes = try await tx.rows("DELETE FROM authmock_codes WHERE expires_at <= ? RETURNING code", [horizon]).count
            var total = try await Self.pruned(tx)
            total.access += removed.access
            total.refresh += removed.refresh
            total.families += removed.families
            total.codes += removed.codes
            total.passes += 1
            try await Self.setMeta(tx, "pruned", String(decoding: try JSONEncoder().encode(total), as: UTF8.self))
            return removed
        }
    }

    private static func pruned(_ tx: any SQLTransaction) async throws -> PrunedCounts {
        guard let text = try await meta(tx, "pruned") else { return PrunedCounts() }
        return (try? JSONDecoder().decode(PrunedCounts.self, from: Data(text.utf8))) ?? PrunedCounts()
    }

    public func prunedCounts() async throws -> PrunedCounts {
        try await transaction { tx in try await Self.pruned(tx) }
    }

    public func reset() async throws {
        try await transaction { tx in
            for table in ["authmock_access", "authmock_refresh", "authmock_families", "authmock_codes"] {
                _ = try await tx.rows("DELETE FROM \(table)", [])
            }
            _ = try await tx.rows("DELETE FROM authmock_meta WHERE key IN ('pruned', 'clock_offset')", [])
        }
    }
}

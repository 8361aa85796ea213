import Foundation
import Synchronization

/// The client's tokens and its one refresh at a time.
///
/// Every refresh bumps `generation`. A call remembers the generation its
/// token came from; when it gets a 401 and a newer generation already exists,
/// the refresh it would ask for has happened (a late 401), so it only
/// retries. Concurrent 401s of one generation share one refresh task.
actor TokenStore {
    enum RefreshResult: Sendable, Equatable {
        /// New tokens are in place (now or by an earlier refresh).
        case refreshed
        /// The server refused the refresh: the user must sign in again.
        case rejected(status: Int?, message: String)
        /// The refresh endpoint was unreachable or failing: try later, keep the session.
        case unavailable(status: Int?, message: String)
    }

    private(set) var access: String?
    private(set) var refresh: String?
    private(set) var generation = 0
    private var accessIssuedAt = 0
    /// When the client's own clock considers the access token expired.
    private(set) var expiresAt: ContinuousClock.Instant?
    private var lifetime: Double?
    private var inFlight: Task<RefreshResult, Never>?
    /// Which refresh `inFlight` is: a refresh that ends clears the slot only
    /// if it is still its own (a sign-in may have handed it to a new session's).
    private var inFlightNumber = 0
    /// The session that started the refresh in flight.
    private var inFlightSession = 0
    /// Refreshes a later session's call waited for (only where the slot
    /// outlives its session: `joinOldSessionRefresh`); their answer is that
    /// call's, so it is adopted.
    private var joinedAcrossSessions = Set<Int>()
    /// Once a refresh is refused, every later call is told to sign in again.
    private var signedOut: RefreshResult?
    /// Bumped by every sign-in and sign-out: a refresh that began in another
    /// session must not bring its tokens into this one.
    private var session = 0
    /// How long before expiry the client's own clock calls a token due; nil: the default rule.
    private let margin: Duration?
    /// The broken variant: expiry from the JWT's `exp` and the device clock.
    private let expiryFromJWT: Bool
    /// The broken variant: a sign-in or sign-out leaves the old session's
    /// refresh in the slot, so the new session's calls wait for it and take
    /// its answer (a refresh not keyed by the token it began with: case 9.3's report).
    private let joinOldSessionRefresh: Bool
    /// What cancelling a call that waits for a refresh does besides. A
    /// correct client: nothing (the refresh runs in a task of its own and
    /// its answer is kept for the calls after).
    enum CancelEffect: Sendable {
        case none
        /// The broken variant: the refresh runs as part of the call that
        /// started it, so cancelling that call cancels its request; the
        /// server has rotated the tokens and the answer is never read (KTOR-8285).
        case abortRefresh
        /// The broken variant: a cancelled waiter empties the single-flight
        /// slot, so the next call starts a second refresh with the refresh
        /// token the first one is spending (ReviewStage/luke#570).
        case clearSlot
    }
    private let cancelEffect: CancelEffect
    /// Refreshes a cancelled waiter gave up (`clearSlot`): set in the
    /// cancellation handler, which runs at once and outside the actor, so
    /// the slot is empty for the very next call.
    private let abandoned = Mutex<Set<Int>>([])

    init(margin: Duration? = nil, expiryFromJWT: Bool = false, joinOldSessionRefresh: Bool = false, cancelEffect: CancelEffect = .none) {
        self.margin = margin
        self.expiryFromJWT = expiryFromJWT
        self.joinOldSessionRefresh = joinOldSessionRefresh
        self.cancelEffect = cancelEffect
    }

    /// A new session owns no refresh: one the old session left out ends
    /// alone. The broken variant `keepCached` keeps the tokens cached before
    /// the sign-in.
    func signIn(access: String, refresh: String?, lifetime: Double?, keepCached: Bool = false) {
        session += 1
        if !joinOldSessionRefresh { inFlight = nil }
        if keepCached, self.access != nil {
            generation += 1
            signedOut = nil
            return
        }
        self.access = access
        self.refresh = refresh
        accessIssuedAt = Self.issuedAt(access)
        generation += 1
        signedOut = nil
        setLifetime(lifetime)
    }

    /// An answer without a lifetime (some backends never send one): the token's
    /// own `exp` less its `iat`, counted from receipt as `expires_in` would
    /// be; an opaque token's previous lifetime still holds.
    private func setLifetime(_ seconds: Double?) {
        if let seconds {
            lifetime = seconds
        } else if let access, let exp = Self.claim("exp", of: access), let iat = Self.claim("iat", of: access), exp > iat {
            lifetime = exp - iat
        }
        expiresAt = lifetime.map { .now + .milliseconds(Int($0 * 1000)) }
        if expiryFromJWT, let access, let exp = Self.claim("exp", of: access) {
            expiresAt = .now + .milliseconds(Int((exp - Date().timeIntervalSince1970) * 1000))
        }
    }

    /// What another instance's in-memory copy of the store starts from (the
    /// broken variant `instances-keep-own-copy`: read once, never again).
    struct Copy: Sendable {
        var access, refresh: String?
        var accessIssuedAt: Int
        var lifetime: Double?
        var expiresAt: ContinuousClock.Instant?
        var signedOut: RefreshResult?
    }

    var copy: Copy {
        Copy(access: access, refresh: refresh, accessIssuedAt: accessIssuedAt, lifetime: lifetime, expiresAt: expiresAt, signedOut: signedOut)
    }

    func start(from copy: Copy) {
        (access, refresh, accessIssuedAt, lifetime, expiresAt, signedOut) =
            (copy.access, copy.refresh, copy.accessIssuedAt, copy.lifetime, copy.expiresAt, copy.signedOut)
        generation += 1
    }

    /// The app signs the user out: tokens gone, every later call told to sign in.
    func signOut() {
        session += 1
        if !joinOldSessionRefresh { inFlight = nil }
        access = nil
        refresh = nil
        expiresAt = nil
        signedOut = .rejected(status: nil, message: "signed out")
    }

    /// Refresh ahead of expiry this long before it (golang.org/x/oauth2 uses
    /// 10 s; short-lived tokens get a quarter of their lifetime).
    /// The generation to refresh after when the token is due, read in one
    /// step with the due check so concurrent calls agree on one refresh.
    /// `joinInFlight: false` is the broken variant that does not wait for a
    /// renewing already under way (it then sends without a token).
    func dueGeneration(joinInFlight: Bool = true) -> Int? {
        if joinInFlight { return dueForRefresh && signedOut == nil ? generation : nil }
        guard refreshInFlight == nil, !claimed, dueForRefresh, signedOut == nil else { return nil }
        // The caller's refresh starts at its next step on this actor; until
        // then its claim counts as the renewal under way, so that which of
        // two concurrent calls meets it does not depend on how they interleave.
        claimed = true
        return generation
    }

    /// A due refresh claimed by `dueGeneration(joinInFlight: false)` whose
    /// `refresh` has not started yet (the broken variant only).
    private var claimed = false

    var dueForRefresh: Bool {
        guard let expiresAt, let lifetime else { return false }
        return .now + (margin ?? .milliseconds(Int(min(10, lifetime / 4) * 1000))) >= expiresAt
    }

    /// The current token; waits for a refresh in flight, so a call started
    /// during a refresh goes out with the new token, never without one.
    func current(waitForRefresh: Bool = true) async -> (token: String?, generation: Int, signedOut: RefreshResult?) {
        if waitForRefresh, let inFlight = refreshInFlight { _ = await join(inFlight) }
        // The broken variant clears its token while refreshing and sends without one.
        if !waitForRefresh, refreshInFlight != nil || claimed { return (nil, generation, signedOut) }
        return (access, generation, signedOut)
    }

    /// Waits for the refresh in flight, noting a wait from a later session
    /// than the one that started it (only the broken variant lets one happen).
    private func join(_ refresh: Task<RefreshResult, Never>) async -> RefreshResult {
        if inFlightSession != session { joinedAcrossSessions.insert(inFlightNumber) }
        return await wait(for: refresh, number: inFlightNumber)
    }

    /// Waits for refresh number `number`. A cancelled caller keeps waiting
    /// (its call then fails at its next request): the refresh goes on either
    /// way. `perform`: the refresh's request, for the caller that started it.
    private func wait(
        for refresh: Task<RefreshResult, Never>, number: Int,
        perform: Task<(RefreshResult, access: String?, refresh: String?, lifetime: Double?), Never>? = nil
    ) async -> RefreshResult {
        switch cancelEffect {
        case .none:
            return await refresh.value
        case .abortRefresh:
            return await withTaskCancellationHandler {
                await refresh.value
            } onCancel: {
                perform?.cancel()
            }
        case .clearSlot:
            return await withTaskCancellationHandler {
                await refresh.value
            } onCancel: {
                _ = self.abandoned.withLock { $0.insert(number) }
            }
        }
    }

    /// The refresh in flight, unless a cancelled waiter gave it up (the broken `clearSlot` variant).
    private var refreshInFlight: Task<RefreshResult, Never>? {
        abandoned.withLock { $0.contains(inFlightNumber) } ? nil : inFlight
    }

    /// Refreshes once for all calls that saw `generation` fail.
    /// `outside`: a refresh of the app's own beside the single flight
    /// (`refresh-on-reconnect`): no call joins it, and it is not the one in flight.
    func refresh(
        after seen: Int, singleFlight: Bool = true, keepAbsentRefresh: Bool = true, acceptLateRefresh: Bool = false, outside: Bool = false,
        perform:
            @escaping @Sendable (_ access: String?, _ refresh: String?) async -> (RefreshResult, access: String?, refresh: String?, lifetime: Double?)
    ) async -> RefreshResult {
        claimed = false
        if let signedOut { return signedOut }
        if singleFlight && !outside {
            if generation > seen { return .refreshed }
            if let inFlight = refreshInFlight { return await join(inFlight) }
        }
        let (access, refresh, session) = (self.access, self.refresh, self.session)
        if outside {
            let (result, newAccess, newRefresh, lifetime) = await perform(access, refresh)
            // Numbered as no refresh in flight is: its end leaves the single flight's slot as it is.
            return finish(
                result, access: newAccess, refresh: newRefresh, lifetime: lifetime, keepAbsentRefresh: keepAbsentRefresh, session: session,
                number: -1, acceptLate: acceptLateRefresh)
        }
        inFlightNumber += 1
        inFlightSession = session
        let number = inFlightNumber
        let task = Task { await perform(access, refresh) }
        let completion = Task<RefreshResult, Never> {
            let (result, newAccess, newRefresh, lifetime) = await task.value
            return self.finish(
                result, access: newAccess, refresh: newRefresh, lifetime: lifetime, keepAbsentRefresh: keepAbsentRefresh, session: session,
                number: number, acceptLate: acceptLateRefresh)
        }
        inFlight = completion
        return await wait(for: completion, number: number, perform: task)
    }

    private func finish(
        _ result: RefreshResult, access newAccess: String?, refresh newRefresh: String?, lifetime: Double?, keepAbsentRefresh: Bool,
        session started: Int, number: Int, acceptLate: Bool
    ) -> RefreshResult {
        if number == inFlightNumber { inFlight = nil }
        let joined = joinedAcrossSessions.remove(number) != nil
        // The user signed out (or in again) while this refresh was out: its
        // answer belongs to a session that is over. The broken variants revive
        // it: always (`acceptLate`), or for a later session's call that waited for it.
        if started != session {
            guard acceptLate || joined, case .refreshed = result else {
                return signedOut ?? .rejected(status: nil, message: "signed out during the refresh")
            }
            signedOut = nil
        }
        switch result {
        case .refreshed:
            if let newAccess {
                access = newAccess
                accessIssuedAt = Self.issuedAt(newAccess)
                setLifetime(lifetime)
            }
            // RFC 6749 section 6: no refresh_token in the answer means keep the old one.
            if let newRefresh { refresh = newRefresh } else if !keepAbsentRefresh { refresh = nil }
            generation += 1
        case .rejected:
            signedOut = result
        case .unavailable:
            break
        }
        return result
    }

    /// A token handed out in a response header: adopted unless it is older
    /// than the one held (answers can arrive out of order).
    func adoptRotated(_ token: String, acceptOlder: Bool = false) {
        let issued = Self.issuedAt(token)
        guard token != access, acceptOlder || issued >= accessIssuedAt else { return }
        access = token
        accessIssuedAt = issued
        generation += 1
    }

    /// Keeps the refresh token the client started with (a bug, behind a fault switch).
    func restoreRefresh(_ token: String?) { refresh = token }

    /// `iat` of a JWT, 0 when unreadable.
    static func issuedAt(_ token: String) -> Int {
        claim("iat", of: token).map { Int($0) } ?? 0
    }

    /// A numeric claim of a JWT, nil when unreadable.
    static func claim(_ name: String, of token: String) -> Double? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
            let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return (claims[name] as? Int).map(Double.init) ?? (claims[name] as? Double)
    }
}

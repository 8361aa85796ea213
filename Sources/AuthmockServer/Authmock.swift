public import AuthmockCore
import DriverProtocol
import Foundation
import Logging
import NIOSSL
import Synchronization

/// One running mock: its token authority, directory and options. Routes of
/// every dialect, and later the control API, share this object.
public final class Authmock: Sendable {
    public let options: ServerOptions
    public let authority: TokenAuthority
    /// The dialect served: oauth2's in Swift, or one described by a file.
    public let dialect: any Dialect
    /// In memory, or the table a PostgreSQL store's replicas share (docs/state.md).
    public let journal: any JournalStore
    /// `journal` when it is the in-process one: the observation middleware
    /// calls it directly (two async calls fewer per request).
    let memoryJournal: MemoryJournal?
    /// Requests by kind as they reach this replica, answered or not.
    let arrivals = ArrivalCounts()
    public let faults = FaultRules()
    public let metrics = ServerMetrics()
    /// `/graphql`: its schema and the notes its mutation stores.
    let graphQL: GraphQLEndpoint
    /// Encoded `/api/me` answers by token id.
    let meAnswers = ResponseCache(limit: 10_000)
    /// Built from `options.tls` at start, so a bad certificate fails before listening.
    let tlsConfiguration: TLSConfiguration?
    private let baseURLBox: Mutex<String>
    /// From `options.corsOrigin`, checked at start.
    let cors: CORSPolicy
    /// `authmock proxy`: the tokens the real backend handed out, as they
    /// passed; nil when this mock issues its own.
    public let learned: LearnedTokens?
    /// What judges and draws the traffic (`GET /_authmock/verdicts` with
    /// `options.judge`, and the console's time line); nil in a server started
    /// without the suite.
    public let judge: (any TrafficJudging)?

    /// `state`: the token store and journal the caller opened for
    /// `options.state` (`ServerState`); nil keeps both in memory.
    public init(
        options: ServerOptions, state: ServerState? = nil, clock: VirtualClock = VirtualClock(), judge: (any TrafficJudging)? = nil
    ) async throws {
        try options.dialectOptions.validate()
        let dialect: any Dialect
        if let description = options.dialect {
            dialect = DeclaredDialect(description, options: options.dialectOptions)
        } else if let builtIn = Dialects.make(options.profile, options: options.dialectOptions) {
            dialect = builtIn
        } else {
            throw SettingsError("unknown dialect '\(options.profile)'; the built-in dialects: \(Dialects.names.joined(separator: ", "))")
        }
        var options = options
        // A dialect whose user names are emails starts with its default account so named (`sign_in.default_user`).
        if let name = (dialect as? DeclaredDialect)?.description.signIn.defaultUser, options.directory.users == [Directory.defaultUser] {
            options.directory.users = [Directory.defaultUser(named: name)]
        }
        try options.tokens.validate()
        guard options.maxBodyBytes >= 1024 else { throw SettingsError("--max-body must be at least 1024 bytes") }
        guard options.journalLimit >= 1 else { throw SettingsError("--journal-limit must be at least 1") }
        if !options.listensOnLoopbackOnly, (options.adminToken ?? "").isEmpty {
            throw SettingsError(
                "listening on \(options.host) exposes the control API (/_authmock/) beyond this machine: set --admin-token or AUTHMOCK_ADMIN_TOKEN")
        }
        self.cors = try CORSPolicy(setting: options.corsOrigin)
        var settings = options.tokens
        // A dialect's JWTs (a file given with --dialect, or a built-in one).
        if let shape = (dialect as? DeclaredDialect)?.description.jwt {
            settings.jwtShape = TokenShape(
                issuerPath: shape.issuerPath, accessLeftOut: shape.accessLeftOut, accessClaims: shape.accessClaims,
                idTokenClaims: shape.idTokenClaims, refreshClaims: shape.refreshClaims)
        }
        let base =
            (options.publicURL ?? "\(options.tls == nil ? "http" : "https")://\(Self.urlHost(options.advertisedHost ?? options.host)):\(options.port)")
        settings.issuer = Self.trimmed(base)
        do {
            self.tlsConfiguration = try options.tls?.serverConfiguration()
        } catch let error as TLSSetupError {
            throw SettingsError(error.description)
        } catch {
            throw SettingsError("the TLS certificate or key cannot be used: \(error)")
        }
        self.options = options
        self.dialect = dialect
        self.judge = judge
        self.learned = options.upstream.map { LearnedTokens(expireAfterSeconds: $0.expireAfterSeconds) }
        self.graphQL = try GraphQLEndpoint()
        self.baseURLBox = Mutex(settings.issuer)
        if state == nil, options.state != "memory" {
            throw SettingsError("--state \(options.state): the server opens no database itself; pass the state its caller opened (ServerState)")
        }
        let state = state ?? .memory(options)
        let store = state.store
        self.journal = state.journal
        self.memoryJournal = state.journal as? MemoryJournal
        do {
            // A kept key keeps earlier tokens valid; a kept clock keeps their expiry where a test moved it.
            let key = try await store.adoptSigningKey(options.signingKey)
            if let offset = try await store.sharedSettings().clockOffset { clock.setOffset(seconds: offset) }
            self.authority = try await TokenAuthority(settings: settings, signingKey: key, clock: clock, store: store)
            authority.setUserClaims(
                Dictionary(options.directory.users.map { ($0.username, $0.claims ?? [:]) }, uniquingKeysWith: { first, _ in first }))
        } catch let error as TokenStoreError {
            // Most store errors start with the store's name already; a password never shows.
            let named = error.description.hasPrefix(store.name) ? error.description : "\(store.name): \(error.description)"
            throw StartError("--state " + named)
        }
    }

    /// Drops what this server kept in its store: the runner's throwaway case servers.
    public func discardState() async {
        try? await authority.store.discard()
        try? await journal.discard()
    }

    public var directory: Directory { options.directory }
    /// The operations the control API exposes, for in-process callers (the scenario runner).
    public var control: MockControl { MockControl(mock: self) }
    public var clock: VirtualClock { authority.clock }

    /// Base URL of the server as clients see it (no trailing slash).
    public var baseURL: String { baseURLBox.withLock { $0 } }

    /// Called once the listener is bound, so port 0 resolves to the real port.
    /// Tokens carry the issuer of the moment they were issued; none exist yet.
    func serverBound(port: Int) {
        guard options.publicURL == nil else { return }
        let url = "\(options.tls == nil ? "http" : "https")://\(Self.urlHost(options.advertisedHost ?? options.host)):\(port)"
        baseURLBox.withLock { $0 = url }
        authority.setIssuer(url)
    }

    private static func urlHost(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    private static func trimmed(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}

/// The server cannot start with what it was given, though the command line
/// was well formed (a database that cannot be reached, corrupt stored state):
/// said once, without the usage text a mistyped option gets.
public struct StartError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

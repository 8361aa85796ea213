import Foundation
import AuthmockCore
import AuthmockModel
public import Hummingbird
import NIOCore
import Synchronization

/// What a request's handling leaves for the observation middleware and the
/// log line on the way back: the documented error code answered, the tokens
/// and mutations `ClientRoutes` saw issued, the id-token claims an
/// `id-token` fault asks for, and the journal entry made of it all. A
/// reference, because the middleware's context is a copy of the route's.
/// The error code is written where an answer is made (`Dialect.fail`,
/// oauth2's grant errors, the GraphQL endpoint); the rest in `ClientRoutes`
/// and `ObservationMiddleware`.
public final class RequestNotes: Sendable {
    struct Values: Sendable {
        var errorCode: String?
        var situation: String?
        var entry: JournalEntry?
        var issued: IssuedTokens?
        /// Ids of the tokens a proxied answer handed out (`LearnedTokens`).
        var learned: (access: TokenID?, refresh: TokenID?)
        var mutationsApplied: Int?
        var idTokenClaims: [String: String]?
    }
    private let state = Mutex(Values())

    /// All of them under one lock (the journal reads them together).
    var values: Values { state.withLock { $0 } }

    var errorCode: String? {
        get { state.withLock { $0.errorCode } }
        set { state.withLock { $0.errorCode = newValue } }
    }

    /// The dialect's situation key of the error answered (`Dialect.fail`).
    var situation: String? {
        get { state.withLock { $0.situation } }
        set { state.withLock { $0.situation = newValue } }
    }

    /// Claims an `id-token` fault rule puts in this answer's id token.
    var idTokenClaims: [String: String]? {
        get { state.withLock { $0.idTokenClaims } }
        set { state.withLock { $0.idTokenClaims = newValue } }
    }

    /// The journal entry of this request, for the log line.
    var entry: JournalEntry? {
        get { state.withLock { $0.entry } }
        set { state.withLock { $0.entry = newValue } }
    }

    /// GraphQL mutations the request applied.
    var mutationsApplied: Int? {
        get { state.withLock { $0.mutationsApplied } }
        set { state.withLock { $0.mutationsApplied = newValue } }
    }

    /// Tokens a proxied answer handed out, as the proxy names them.
    var learned: (access: TokenID?, refresh: TokenID?) {
        get { state.withLock { $0.learned } }
        set { state.withLock { $0.learned = newValue } }
    }

    /// Tokens the answer hands out.
    var issued: IssuedTokens? {
        get { state.withLock { $0.issued } }
        set { state.withLock { $0.issued = newValue } }
    }
}

public struct AuthmockRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let notes = RequestNotes()
    /// The connection, so a fault rule can close it.
    let channel: any Channel
    /// What the request is for and its parsed body, set on arrival by the
    /// observation middleware and passed on to the route.
    public var route: RouteClassification { arrival.route }
    /// The `Authorization` header as parsed on arrival (nil outside the
    /// client's routes, which are not observed).
    var credential: PresentedCredential? { arrival.credential }
    /// The Bearer token's verification, done once on arrival, so the route
    /// judges the token as it was when the request came in.
    var verification: AccessVerification? { arrival.verification }
    /// When the request arrived, on the server's clock: a refresh that came
    /// in before another refresh of its token was decided met it "at once"
    /// (`concurrent_refresh`).
    var arrivedAt: Date? { arrival.arrivedAt }
    /// A proxy's judgement of the presented tokens on arrival (`LearnedTokens.judge`):
    /// what it answers for the backend reads it rather than judging again.
    var learned: (access: PresentedToken?, refresh: PresentedToken?) { arrival.learned }
    /// All behind one reference, set once: every middleware and route
    /// closure copies the context, and a copy of the classified body and
    /// verified claims inline was a retain per field each time.
    private var arrival = ArrivalFacts.none

    /// What the observation middleware learned on arrival.
    mutating func arrived(
        route: RouteClassification, credential: PresentedCredential, verification: AccessVerification?, at time: Date,
        learned: (access: PresentedToken?, refresh: PresentedToken?) = (nil, nil)
    ) {
        arrival = ArrivalFacts(route: route, credential: credential, verification: verification, arrivedAt: time, learned: learned)
    }

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// What the observation middleware learned on arrival (see `AuthmockRequestContext.route`).
private final class ArrivalFacts: Sendable {
    let route: RouteClassification
    let credential: PresentedCredential?
    let verification: AccessVerification?
    let arrivedAt: Date?
    let learned: (access: PresentedToken?, refresh: PresentedToken?)

    init(
        route: RouteClassification, credential: PresentedCredential?, verification: AccessVerification?, arrivedAt: Date?,
        learned: (access: PresentedToken?, refresh: PresentedToken?) = (nil, nil)
    ) {
        self.route = route
        self.credential = credential
        self.verification = verification
        self.arrivedAt = arrivedAt
        self.learned = learned
    }

    static let none = ArrivalFacts(route: RouteClassification(kind: .other), credential: nil, verification: nil, arrivedAt: nil)
}

import Logging
import AuthmockCore
import AuthmockModel
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// Sees every request of the client under test (the `ClientRoutes` group and
/// unrouted requests) before and after it is handled: enforces the body
/// limit, classifies and parses it for the route, judges the presented
/// tokens as they are at arrival, fires fault rules, and writes the journal
/// entry with what the route issued.
struct ObservationMiddleware: RouterMiddleware {
    let mock: Authmock
    /// Turns what the route threw into the dialect's documented answer before it is journaled.
    let errors: ErrorMiddleware

    func handle(
        _ request: Request, context: AuthmockRequestContext,
        next: (Request, AuthmockRequestContext) async throws -> Response
    ) async throws -> Response {
        // The client's requests pass no other error middleware (one async
        // frame fewer on every request): what escapes below (a failing
        // store, a cancelled hold) gets its documented answer here.
        do {
            return try await observe(request, context: context, next: next)
        } catch {
            let response = try errors.answer(error, request, context: context)
            if context.logger.logLevel <= .info { RequestLog.write(request, status: response.status.code, context: context, ms: nil) }
            return response
        }
    }

    @inline(__always)
    private func observe(
        _ request: Request, context: AuthmockRequestContext,
        next: (Request, AuthmockRequestContext) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        var context = context
        let seq = if let memory = mock.memoryJournal { memory.nextSequence() } else { try await mock.journal.nextSequence() }
        let arrival = (seq: seq, virtual: mock.clock.now(), real: Date(), start: ContinuousClock.now)
        let profile = mock.dialect
        var request = request
        let presented = PresentedCredential(request.headers)
        var entry = JournalEntry(
            seq: arrival.seq, virtualTime: arrival.virtual, realTime: arrival.real,
            method: request.method.rawValue, path: path, host: request.head.authority, kind: .other, scheme: presented.scheme,
            call: request.headers[.authmockCall], bodyBytes: 0, status: 0, undelivered: false, durationMs: 0)
        // The body is read here once (and kept on the request for the route),
        // so it can be hashed, classified and limited in one place.
        let body: ByteBuffer
        switch try await readBody(&request, context) {
        case .success(let read): body = read
        case .failure(let refusal): return await answer(&entry, request, context, since: arrival.start, refusal.response)
        }
        if body.readableBytes > 0 {
            entry.bodyBytes = body.readableBytes
            entry.bodyDigest = BodyDigest(sha256: SHA256.hash(data: body.readableBytesView))
        } else if let length = request.headers[.contentLength].flatMap(Int.init), mock.options.streamsUpload(length: length) {
            entry.bodyBytes = length
        }

        var route = profile.classify(method: request.method, path: path, query: request.uri.query, headers: request.headers, body: body)
        // `/graphql` is the same in every dialect: read here, whatever kind the dialect gave it.
        if path == GraphQLCall.path {
            route.body = .graphQL(GraphQLCall.read(method: request.method, query: request.uri.query, body: body))
            entry.operation = route.graphQL?.label
        }
        // A proxy judges the backend's tokens by what it saw handed out
        // (before the kind is recorded: a bearer call anywhere is an API call).
        if let learned = mock.learned { learned.judge(&route, &entry, presented: presented.token, at: arrival.virtual) }
        entry.kind = route.kind
        entry.grantType = route.grantType
        mock.arrivals.note(route.kind)
        // A refresh token in Authorization (header rotation) is judged as a refresh token only.
        var verification: AccessVerification? = nil
        if mock.learned == nil, let token = presented.token, !token.isEmpty, token != route.refreshToken {
            // A resource takes the token `api_token` names; anything else presents an access token.
            verification = try await route.kind == .resource ? mock.authority.verifyResourceToken(token) : mock.authority.verifyAccessToken(token)
            entry.accessToken = verification.map(PresentedToken.init)
        }
        context.arrived(
            route: route, credential: presented, verification: verification, at: arrival.virtual, learned: (entry.accessToken, entry.refreshToken))
        if mock.learned == nil, let refresh = route.refreshToken {
            entry.refreshToken = PresentedToken(refresh: try await mock.authority.inspectRefreshToken(refresh))
            // Not a refresh token of ours: one of our access tokens in its place is named as such.
            if entry.refreshToken?.id == nil, let access = try await mock.authority.verifyAccessToken(refresh).presentedAsRefresh {
                entry.refreshToken = access
            }
        }

        var lastFault: Int? = nil
        if let decided = try await fireFaults(&entry, &lastFault, request, context, route: route, since: arrival.start, next) { return decided }
        return await answer(&entry, request, context, since: arrival.start, try await routed(request, context, next), fault: lastFault)
    }

    /// A refusal of the body, as an error so it can travel in a `Result`.
    private struct BodyRefusal: Error { var response: Response }

    /// The request's body, read once; or the documented refusal of one too
    /// large or badly framed. Anything else thrown gets its answer in `handle`.
    @inline(__always)
    private func readBody(_ request: inout Request, _ context: AuthmockRequestContext) async throws -> Result<ByteBuffer, BodyRefusal> {
        let profile = mock.dialect
        let limit = mock.options.maxBodyBytes
        let length = request.headers[.contentLength]
        if let length = length.flatMap(Int.init), length > limit {
            // A proxy passes an upload it need not read to the backend as it
            // comes (`UpstreamForwarder`): journaled by its length, unhashed.
            if mock.options.streamsUpload(length: length) { return .success(ByteBuffer()) }
            return .failure(BodyRefusal(response: profile.fail(.payloadTooLarge("\(length) > \(limit) bytes"), context: context)))
        }
        do {
            // An HTTP/1.1 request with neither header has no body (RFC 9112
            // section 6.3): nothing to wait for on most requests.
            if length != nil || request.headers[.transferEncoding] != nil { return .success(try await request.collectBody(upTo: limit)) }
            return .success(ByteBuffer())
        } catch let error as HTTPError where error.status == .contentTooLarge {
            return .failure(BodyRefusal(response: profile.fail(.payloadTooLarge("limit \(limit) bytes"), context: context)))
        } catch is NIOTooManyBytesError {
            // A chunked body has no Content-Length to refuse up front: it is cut off here.
            return .failure(BodyRefusal(response: profile.fail(.payloadTooLarge("limit \(limit) bytes"), context: context)))
        } catch let error as HTTPParserError {
            // The body's framing is broken: the client's bug, not ours. Nothing
            // after it on this connection can be framed either, so it closes.
            var refusal = profile.fail(.malformedFraming("\(error)"), context: context)
            refusal.headers[.connection] = "close"
            return .failure(BodyRefusal(response: refusal))
        }
    }

    /// Fault rules: holding actions (delay, gather) wait and pass the
    /// request on, so a later rule may act on it too; the first other
    /// action that fires decides the answer (returned, already recorded).
    /// nil: the route answers, `lastFault` names the last rule that acted.
    @inline(__always)
    private func fireFaults(
        _ entry: inout JournalEntry, _ lastFault: inout Int?, _ request: Request, _ context: AuthmockRequestContext, route: RouteClassification,
        since start: ContinuousClock.Instant, _ next: (Request, AuthmockRequestContext) async throws -> Response
    ) async throws -> Response? {
        let path = request.uri.path
        var acted: Set<Int> = []
        while let fault = mock.faults.fire(method: request.method.rawValue, path: path, kind: route.kind, headers: request.headers, excluding: acted)
        {
            acted.insert(fault.id)
            lastFault = fault.id
            context.logger.info("fault rule \(fault.id) fires on \(request.method) \(path)")
            switch fault.rule.action {
            case .respond(let status, let headers, let text):
                var fields = HTTPFields()
                for (name, value) in headers { if let name = HTTPField.Name(name) { fields[name] = value } }
                let response = Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: text ?? "")))
                return await answer(&entry, request, context, since: start, response, fault: fault.id)
            case .answer(let key):
                // Checked when the rule was installed or its case loaded; an unknown name answers as a bug would.
                let response = mock.dialect.fail(Situation.named(key) ?? .internalError, context: context)
                return await answer(&entry, request, context, since: start, response, fault: fault.id)
            case .delay(let milliseconds):
                try await mock.faults.hold(rule: fault.id, milliseconds: milliseconds)
            case .idToken(let claims):
                context.notes.idTokenClaims = claims
            case .gather(let count, let milliseconds, let quiet):
                try await mock.faults.gather(rule: fault.id, count: count, milliseconds: milliseconds, quiet: quiet)
            case .delayResponse(let milliseconds):
                // Journalled now, so a case can wait for the answer to exist; the
                // entry's duration includes the hold: it says when the client got it.
                let response = await answer(
                    &entry, request, context, since: start, try await routed(request, context, next), fault: fault.id,
                    heldMs: Double(milliseconds), logged: false)
                if try await !mock.faults.hold(rule: fault.id, milliseconds: milliseconds) {
                    // Released early (its rule removed): the entry says when the answer really went.
                    entry.durationMs = (ContinuousClock.now - start).inMilliseconds
                    if let memory = mock.memoryJournal { memory.amend(entry) } else { await mock.journal.amend(entry) }
                }
                // The log line when the answer goes, with the time it really took.
                if context.logger.logLevel <= .info {
                    context.notes.entry = entry
                    RequestLog.write(request, status: response.status.code, context: context, ms: entry.durationMs)
                }
                return response
            case .closeConnection:
                await record(&entry, request, context, since: start, nil, fault: fault.id, undelivered: true)
                try await context.channel.close()
                throw ConnectionClosedByFault()
            case .dropResponse:
                let response = try await routed(request, context, next)
                await record(&entry, request, context, since: start, response, fault: fault.id, undelivered: true)
                try await context.channel.close()
                throw ConnectionClosedByFault()
            }
        }
        return nil
    }

    /// The route's answer, or the documented one for what it threw.
    @inline(__always)
    private func routed(
        _ request: Request, _ context: AuthmockRequestContext, _ next: (Request, AuthmockRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try errors.answer(error, request, context: context)
        }
    }

    /// Completes the request's journal entry with its answer (nil: none was
    /// sent) and records it: journal, metrics, log line. Methods with the
    /// entry passed `inout`, not local functions capturing it: a captured
    /// variable lives in a heap box with a dynamic exclusivity check on every
    /// access.
    private func record(
        _ entry: inout JournalEntry, _ request: Request, _ context: AuthmockRequestContext, since start: ContinuousClock.Instant,
        _ response: Response?, fault: Int? = nil, undelivered: Bool = false, heldMs: Double = 0, logged: Bool = true
    ) async {
        entry.status = response.map { Int($0.status.code) } ?? 0
        let notes = context.notes.values
        entry.errorCode = notes.errorCode
        entry.situation = notes.situation
        entry.issuedAccessID = notes.issued?.accessKey ?? notes.learned.access
        entry.issuedRefreshID = notes.issued?.refreshKey ?? notes.learned.refresh
        entry.mutationsApplied = notes.mutationsApplied
        entry.fault = fault
        entry.undelivered = undelivered
        entry.durationMs = (ContinuousClock.now - start).inMilliseconds + heldMs
        mock.metrics.record(entry)
        if logged, context.logger.logLevel <= .info, let response, !undelivered {
            context.notes.entry = entry
            RequestLog.write(request, status: response.status.code, context: context, ms: entry.durationMs)
        }
        if let memory = mock.memoryJournal { memory.append(entry) } else { await mock.journal.append(entry) }
    }

    /// Records a delivered answer and returns it.
    @inline(__always)
    private func answer(
        _ entry: inout JournalEntry, _ request: Request, _ context: AuthmockRequestContext, since start: ContinuousClock.Instant,
        _ response: Response, fault: Int? = nil, heldMs: Double = 0, logged: Bool = true
    ) async -> Response {
        await record(&entry, request, context, since: start, response, fault: fault, heldMs: heldMs, logged: logged)
        return response
    }
}

/// Thrown after a fault rule closed the connection: there is nobody left to answer.
struct ConnectionClosedByFault: Error {}

extension PresentedToken {
    init(_ verification: AccessVerification) {
        switch verification {
        case .valid(let grant): self.init(kind: .access, key: grant.key, state: .valid)
        case .invalid(let failure, let jti): self.init(kind: .access, id: jti, state: failure.journalState)
        }
    }

    init(refresh info: RefreshTokenInfo?) {
        guard let info else {
            self.init(kind: .refresh, id: nil, state: .unknown)
            return
        }
        let state: State =
            switch info.failure {
            case nil: info.rotated ? .rotatedGrace : .valid
            case .reused: .rotatedReuse
            case let failure?: State(rawValue: failure.rawValue.replacingOccurrences(of: "_", with: "-"))
            }
        self.init(kind: .refresh, id: info.id, state: state)
    }
}

extension AccessVerification {
    /// This access token presented where a refresh token goes: its `jti`
    /// and the state `access-token`; nil when it is no access token of ours.
    var presentedAsRefresh: PresentedToken? {
        switch self {
        case .valid(let grant): PresentedToken(kind: .refresh, key: grant.key, state: .accessToken)
        case .invalid(let failure, let jti?) where [.expired, .revoked, .notYetValid, .wrongAudience].contains(failure):
            PresentedToken(kind: .refresh, id: jti, state: .accessToken)
        case .invalid: nil
        }
    }
}

extension AccessTokenFailure {
    /// The state name the journal uses.
    var journalState: PresentedToken.State {
        switch self {
        case .badSignature: "wrong-signature"
        default: PresentedToken.State(rawValue: rawValue.replacingOccurrences(of: "_", with: "-"))
        }
    }
}

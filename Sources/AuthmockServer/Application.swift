import AuthmockCore
import HTTPTypes
public import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging

/// Serves the dialect's fixed documents (`Dialect.document(at:mock:)`) to
/// a GET or HEAD no route took, before the not-found answer.
struct DocumentsMiddleware: RouterMiddleware {
    let mock: Authmock

    func handle(
        _ request: Request, context: AuthmockRequestContext, next: (Request, AuthmockRequestContext) async throws -> Response
    ) async throws -> Response {
        if request.method == .get || request.method == .head, let document = mock.dialect.document(at: request.uri.path, mock: mock) {
            return document
        }
        return try await next(request, context)
    }
}

/// A proxy's answer to a request of the client's: forwarded to the backend
/// (AuthmockProxy's `UpstreamForwarder`).
public typealias Forwarder = @Sendable (Request, AuthmockRequestContext) async throws -> Response

/// Ends the middleware chain of a proxy: every request is forwarded.
struct ForwardingMiddleware: RouterMiddleware {
    let forward: Forwarder

    func handle(
        _ request: Request, context: AuthmockRequestContext, next: (Request, AuthmockRequestContext) async throws -> Response
    ) async throws -> Response {
        try await forward(request, context)
    }
}

/// Assembles the HTTP application of one mock.
public enum AuthmockApplication {
    /// The router: shared routes, the dialect's routes, and the middleware
    /// that keeps every answer documented. `forwarder` (a proxy,
    /// `mock.options.upstream` set): every request of the client's but the
    /// control API and `/metrics` is observed, then answered by it, and the
    /// dialect serves no routes of its own.
    public static func router(
        for mock: Authmock, forwarder: Forwarder? = nil
    ) -> Router<AuthmockRequestContext> {
        let errors = ErrorMiddleware(profile: mock.dialect, maxBodyBytes: mock.options.maxBodyBytes)
        let router = Router(context: AuthmockRequestContext.self)
        // About the mock, not the client under test: neither observed nor
        // journaled; their failures answered and their requests logged by
        // the error middleware (the client's routes do both in the
        // observation middleware, one async frame fewer per request).
        var logged = errors
        logged.logsRequests = true
        let own = router.group().add(middleware: logged)
        own.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: mock.metrics.exposition())))
        }
        ControlRoutes.add(to: own, mock: mock)

        // What the client under test calls: observed, journaled, answered in the dialect's shape.
        let observation = ObservationMiddleware(mock: mock, errors: errors)
        let cors = CORSMiddlewareStack(policy: mock.cors, exposing: mock.dialect.exposedResponseHeaders)
        if let forwarder {
            // No route of the client's: all of it reaches the not-found responder, through these.
            if let cors { router.add(middleware: cors) }
            router.add(middleware: observation)
            router.add(middleware: ForwardingMiddleware(forward: forwarder))
            return router
        }
        var clientGroup = router.group()
        if let cors { clientGroup = clientGroup.add(middleware: cors) }
        let client = ClientRoutes(group: clientGroup.add(middleware: observation))
        client.get("/health") { _, _ in JSONResponse.encode(["status": "ok"]) }
        mock.dialect.addRoutes(to: client, mock: mock)
        Resources.add(to: client, mock: mock)
        GraphQLEndpoint.add(to: client, mock: mock)
        // A request no route serves (a document, an unknown path, or a
        // known path with another method) is the client's too. Hummingbird applies router
        // middleware only to routes added after it, and to the not-found
        // responder it builds last: added here, these observe exactly that.
        // CORS first: a preflight (OPTIONS) is answered before the journal.
        if let cors { router.add(middleware: cors) }
        router.add(middleware: observation)
        router.add(middleware: DocumentsMiddleware(mock: mock))
        return router
    }

    /// The application, ready for `runService()` or a `ServiceGroup`.
    /// `onListening` receives the bound port (useful with port 0).
    /// Throws when the TLS configuration cannot make a server context: a
    /// server asked for TLS never falls back to plain HTTP.
    public static func make(
        mock: Authmock, logger: Logger, forwarder: Forwarder? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        // The TLS configuration was built (and checked) when the mock was made.
        // Connection deadlines: between requests (Hummingbird's idle timeout)
        // and inside one (RequestGuard, which also ends a CONNECT), so no stalled client holds a
        // socket, or shutdown, forever.
        let options = mock.options
        let unparsable = mock.dialect.answer(to: .malformedFraming("the request line or headers cannot be parsed"))
        let unparsableHead = HTTPResponse(status: .init(code: unparsable.status), headerFields: JSONResponse.fields(unparsable.headers))
        let unparsableBody = mock.dialect.errorBody(unparsable)
        let http1 = HTTPServerBuilder.http1(
            configuration: .init(
                additionalChannelHandlers: [
                    RequestGuard(timeout: .seconds(Int64(options.requestReadTimeoutSeconds)), unparsable: (unparsableHead, unparsableBody))
                ],
                idleTimeout: .seconds(Int64(options.idleTimeoutSeconds))))
        let server: HTTPServerBuilder = try mock.tlsConfiguration.map { try .tls(http1, tlsConfiguration: $0) } ?? http1
        return Application(
            router: router(for: mock, forwarder: forwarder),
            server: server,
            configuration: .init(address: .hostname(mock.options.host, port: mock.options.port), serverName: "authmock"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? mock.options.port
                mock.serverBound(port: port)
                await onListening(port)
            },
            logger: logger
        )
    }
}

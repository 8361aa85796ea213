import AuthmockCore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging

/// Assembles the HTTP application of one mock.
public enum AuthmockApplication {
    /// The router: shared routes, the profile's routes, and the middleware
    /// that keeps every answer documented.
    public static func router(for mock: Authmock) -> Router<AuthmockRequestContext> {
        let router = Router(context: AuthmockRequestContext.self)
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: ObservationMiddleware(mock: mock))
        router.add(middleware: ErrorMiddleware(profile: mock.profile, maxBodyBytes: mock.options.maxBodyBytes))
        router.get("/health") { _, _ in
            JSONResponse.encode(["status": "ok"])
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: mock.metrics.exposition())))
        }
        mock.profile.addRoutes(to: router, mock: mock)
        Resources.add(to: router, mock: mock)
        ControlRoutes.add(to: router, mock: mock)
        return router
    }

    /// The application, ready for `runService()` or a `ServiceGroup`.
    /// `onListening` receives the bound port (useful with port 0).
    public static func make(
        mock: Authmock, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        // The TLS configuration was built (and checked) when the mock was made.
        let server: HTTPServerBuilder = mock.tlsConfiguration.flatMap { try? .tls(.http1(), tlsConfiguration: $0) } ?? .http1()
        return Application(
            router: router(for: mock),
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

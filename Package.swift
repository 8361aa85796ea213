// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "authmock",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "authmock", targets: ["authmock"]),
        .executable(name: "authmock-reference-driver", targets: ["authmock-reference-driver"]),
        .executable(name: "authmock-urlsession-driver", targets: ["authmock-urlsession-driver"]),
        .library(name: "DriverKit", targets: ["DriverKit"]),
        .library(name: "DriverProtocol", targets: ["DriverProtocol"]),
        .library(name: "AuthmockCore", targets: ["AuthmockCore"]),
        .library(name: "AuthmockModel", targets: ["AuthmockModel"]),
        .library(name: "AuthmockServer", targets: ["AuthmockServer"]),
        .library(name: "AuthmockControlClient", targets: ["AuthmockControlClient"]),
        // For a test target: a mock and the suite in `swift test` and Xcode (docs/swift-testing.md).
        .library(name: "AuthmockTesting", targets: ["AuthmockTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/GraphQLSwift/GraphQL.git", from: "4.3.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // Token core: clock, keys, token and family state, the error table. No HTTP.
        .target(
            name: "AuthmockCore",
            dependencies: [
                "DriverProtocol",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Databases for token state that outlives the process (`--state`):
        // SQLite through GRDB, PostgreSQL through postgres-nio, both under
        // AuthmockCore's one SQLTokenStore.
        .target(
            name: "AuthmockStore",
            dependencies: [
                "AuthmockCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What the server records and the runner reads: the journal's values
        // (entries, presented tokens, route kinds), and the control API's
        // wire shapes (fault rules, answers, the strict input parser). No HTTP, no server.
        .target(name: "AuthmockModel", dependencies: ["AuthmockCore", "DriverProtocol"]),
        // glibc's malloc_trim, for handing pruned memory back (MemoryReturn.swift).
        .target(name: "CSystemMemory"),
        // HTTP server: shared request plumbing, oauth2's dialect in Swift and every
        // other dialect served from its description (DeclaredDialect), the control API.
        .target(
            name: "AuthmockServer",
            dependencies: [
                "AuthmockCore",
                "AuthmockModel",
                "CSystemMemory",
                "DriverProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // The control API from another process (`authmock ctl`, a test
        // steering a server it did not start), on AsyncHTTPClient: apart
        // from the server, so what links the server links no HTTP client.
        .target(
            name: "AuthmockControlClient",
            dependencies: [
                "AuthmockCore",
                "AuthmockModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // `authmock proxy`: forwards the client's requests to its real backend
        // on AsyncHTTPClient, the server deciding in the dialect's terms around it.
        .target(
            name: "AuthmockProxy",
            dependencies: [
                "AuthmockServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Trusting a development backend's own certificate (`--upstream-ca`).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // authmock's YAML files (cases, dialects, plans, the config file) read
        // and checked against a spec, every problem at file:line:column.
        .target(
            name: "AuthmockFileFormat",
            dependencies: [
                "AuthmockCore",
                "AuthmockServer",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The dialect format: its spec, the loader that compiles a file into a
        // DialectDescription, and the reference generated from it.
        .target(
            name: "AuthmockDialect",
            dependencies: [
                "AuthmockCore",
                "AuthmockFileFormat",
                "AuthmockModel",
                "AuthmockServer",
                "DriverProtocol",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // Scenario model (YAML), the runner that replays it against a driver, and reports.
        .target(
            name: "AuthmockScenario",
            dependencies: [
                "AuthmockCore",
                "AuthmockDialect",
                "AuthmockFileFormat",
                "AuthmockModel",
                "AuthmockServer",
                "DriverProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // How `authmock run` reaches drivers outside its process: a child
        // process per case (stdio), clients attached over a WebSocket and
        // the browser page that attaches, a command launched beside a run.
        .target(
            name: "AuthmockTransports",
            dependencies: [
                "AuthmockScenario",
                "DriverProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A mock and the suite inside a Swift test target: cases run against a
        // client adapter in the same process, as Swift Testing or XCTest tests.
        // Links no CLI, database driver, process or WebSocket transport.
        .target(
            name: "AuthmockTesting",
            dependencies: [
                "AuthmockCore", "AuthmockDialect", "AuthmockModel", "AuthmockProxy", "AuthmockScenario", "AuthmockServer", "DriverKit",
                "DriverProtocol",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The driver protocol's messages and vocabulary, shared by the runner and DriverKit.
        .target(name: "DriverProtocol"),
        // The driver protocol for Swift drivers: wrap a client in ~30 lines;
        // over stdio, or attached to a runner over a WebSocket (in-app tests).
        .target(
            name: "DriverKit",
            dependencies: [
                "DriverProtocol",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A correct token-refresh client for every dialect (and, behind a
        // switch, the classic bugs), on AsyncHTTPClient.
        .target(
            name: "ReferenceClient",
            dependencies: [
                "DriverKit",
                "DriverProtocol",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Trusting an HTTPS case server's certificate (`authmock run --tls`).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Id token validation against the server's JWKS (the `oidc` extension).
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "authmock-reference-driver",
            dependencies: ["DriverKit", "ReferenceClient"]
        ),
        // libFuzzer targets (token, body, scenario): a corpus replayer in normal
        // builds, a fuzzer when built by scripts/fuzz.sh (AUTHMOCK_FUZZ=1).
        .executableTarget(
            name: "authmock-fuzz",
            dependencies: [
                "AuthmockCore", "AuthmockDialect", "AuthmockFileFormat", "AuthmockServer", "AuthmockScenario", "DriverProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // A driver for URLSession with the refresh pattern of iOS blog posts.
        .executableTarget(
            name: "authmock-urlsession-driver",
            dependencies: ["DriverKit"],
            path: "drivers/swift-urlsession",
            exclude: ["README.md", "expected-failures.yaml", "driver.yaml"]
        ),
        // Thin CLI over the modules above.
        .executableTarget(
            name: "authmock",
            dependencies: [
                "AuthmockCore",
                "AuthmockModel",
                "AuthmockServer",
                "AuthmockControlClient",
                "AuthmockDialect",
                "AuthmockFileFormat",
                "AuthmockProxy",
                "AuthmockScenario",
                "AuthmockTransports",
                "DriverProtocol",
                // Databases for --state (serve's, and run's case servers through RunOptions.openState).
                "AuthmockStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // What several test targets share: running child processes.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "AuthmockCoreTests",
            dependencies: ["AuthmockCore", "AuthmockStore", .product(name: "JWTKit", package: "jwt-kit")]
        ),
        .testTarget(
            name: "AuthmockServerTests",
            dependencies: [
                "AuthmockCore",
                "AuthmockControlClient",
                "AuthmockModel",
                "AuthmockServer",
                "DriverProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .testTarget(
            name: "AuthmockScenarioTests",
            dependencies: [
                "AuthmockControlClient", "AuthmockDialect", "AuthmockFileFormat", "AuthmockModel", "AuthmockScenario", "AuthmockServer",
                "AuthmockTransports", "DriverKit", "DriverProtocol", "ReferenceClient",
                "TestSupport",
                "authmock-reference-driver",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The testing library as a test target uses it: the reference client in process.
        .testTarget(name: "AuthmockTestingTests", dependencies: ["AuthmockTesting", "ReferenceClient"]),
        // Starts the real `authmock` binary and talks to it over sockets.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "AuthmockModel",
                "authmock",
                "authmock-fuzz",
                "authmock-reference-driver",
                "authmock-urlsession-driver",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Yams", package: "Yams"),
            ],
            // Client programs the tests start (a misbehaving attached client).
            exclude: ["Fixtures"]
        ),
    ]
)

// Each file imports what it uses (MemberImportVisibility), and a module's
// public interface names only the modules it imports publicly (InternalImportsByDefault).
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("InternalImportsByDefault"),
        ]
}

// scripts/fuzz.sh builds with AUTHMOCK_FUZZ=1: the code under test gets
// libFuzzer's coverage instrumentation, and authmock-fuzz links libFuzzer
// (its FUZZING entry point replaces the corpus replayer's main).
if Context.environment["AUTHMOCK_FUZZ"] != nil {
    let instrumented = ["AuthmockCore", "AuthmockServer", "AuthmockFileFormat", "AuthmockDialect", "AuthmockScenario"]
    for target in package.targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer"])]
    }
    for target in package.targets where target.name == "authmock-fuzz" {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer"]), .define("FUZZING")]
        target.linkerSettings = [.unsafeFlags(["-sanitize=fuzzer"])]
    }
}

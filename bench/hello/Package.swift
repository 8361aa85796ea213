// swift-tools-version:6.0
// The framework's floor for bench/run.sh: a Hummingbird route answering a
// tiny fixed body, built the same way (release) as authmock; with
// `--forward PORT`, the floor of a proxy for bench/proxy.sh: every request
// forwarded as it is with AsyncHTTPClient, as `authmock proxy` does.
import PackageDescription

let package = Package(
    name: "hello",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        .executableTarget(name: "hello", dependencies: [
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
        ]),
    ]
)

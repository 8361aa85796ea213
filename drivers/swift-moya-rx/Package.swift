// swift-tools-version:6.0
// Three authmock drivers for Moya 15 + RxSwift 6, one per refresh recipe,
// next to a checkout of authmock, on macOS, or on Linux with the changes to
// Moya that README.md lists (Alamofire runs unmodified: AlamofireCorelibsSupport).
// README.md has the commands the saved reports in measured/ were made with.
// CI does not build this package: Moya and RxSwift are not in the package mirror CI uses.
import PackageDescription

let package = Package(
    name: "authmock-moya-rx-drivers",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        // The versions the saved reports were measured with (README).
        .package(url: "https://github.com/Moya/Moya.git", exact: "15.0.3"),
        .package(url: "https://github.com/ReactiveX/RxSwift.git", exact: "6.10.2"),
        .package(url: "https://github.com/Alamofire/Alamofire.git", exact: "5.12.0"),
        .package(name: "authmock", path: "../.."),
        // Alamofire's session with the corelibs delegate (swift-alamofire's README).
        .package(name: "authmock-alamofire-drivers", path: "../swift-alamofire"),
    ],
    targets: [
        // What every recipe shares: the API as Moya targets, sign-in, the token store, a call as the app makes it.
        .target(
            name: "MoyaDriverSupport",
            dependencies: [
                .product(name: "Moya", package: "Moya"), .product(name: "RxMoya", package: "Moya"),
                .product(name: "RxSwift", package: "RxSwift"), .product(name: "Alamofire", package: "Alamofire"),
                .product(name: "AlamofireCorelibsSupport", package: "authmock-alamofire-drivers"),
                .product(name: "DriverKit", package: "authmock"),
            ]),
        // Recipe 1: a Moya plugin that adds the token in prepare() and refreshes in didReceive() on a 401.
        .executableTarget(name: "moya-plugin-refresh", dependencies: ["MoyaDriverSupport"]),
        // Recipe 2: AccessTokenPlugin + retryWithAuthIfNeeded: retry(when:) refreshes on each 401, three times at most.
        .executableTarget(name: "moya-rx-retry-with-auth", dependencies: ["MoyaDriverSupport"]),
        // The correct variant: one shared refresh, and no refresh for a 401 that answered an older token.
        .executableTarget(name: "moya-rx-shared-refresh", dependencies: ["MoyaDriverSupport"]),
    ]
)

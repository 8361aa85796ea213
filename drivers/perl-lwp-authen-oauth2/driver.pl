#!/usr/bin/perl
# authmock driver (stdio, protocol version 1) for LWP::Authen::OAuth2 (Debian's
# liblwp-authen-oauth2-perl). Recipe: the module's POD for an application
# that calls an API from several processes at once: every worker builds its
# own $oauth2 from the saved token_string, save_tokens stores what the service
# provider returns, and the prerefresh hook hands over tokens another worker
# already refreshed "so that only one of them will try to refresh tokens".
# Perl applications run concurrent calls as processes (a preforking server),
# so each call here is a forked worker; refresh before expiry and on an
# invalid_token 401 is the module's own (LWP::Authen::OAuth2::AccessToken).
use strict;
use warnings;
use Fcntl qw(:flock);
use File::Temp;
use HTTP::Request;
use JSON::PP;
use LWP::Authen::OAuth2;
use POSIX ();

my $json = JSON::PP->new->utf8->canonical;
my $dir = File::Temp->newdir;    # the application's token store and the stdout lock
my $store = "$dir/token_string";
my $hello;

sub send_line {
    my ($message) = @_;
    open my $lock, '>>', "$dir/stdout.lock" or die "lock: $!";
    flock $lock, LOCK_EX;
    syswrite STDOUT, $json->encode($message) . "\n";
    close $lock;
}

sub saved_token_string {
    open my $in, '<', $store or return undef;
    local $/;
    return scalar <$in>;
}

sub save_tokens {
    my ($token_string) = @_;
    open my $out, '>', "$store.$$" or die "save: $!";
    print $out $token_string;
    close $out;
    rename "$store.$$", $store or die "save: $!";
}

sub oauth2 {
    my %saved = (token_string => saved_token_string());
    delete $saved{token_string} unless defined $saved{token_string};
    return LWP::Authen::OAuth2->new(
        client_id => $hello->{clientId}, client_secret => $hello->{clientSecret},
        token_endpoint => "$hello->{baseURL}/oauth/token", authorization_endpoint => "$hello->{baseURL}/oauth/authorize",
        is_strict => 0,    # lets request_tokens send the password grant's fields
        save_tokens => \&save_tokens, %saved,
        prerefresh => sub {
            my ($self) = @_;
            my $saved = saved_token_string() // return undef;
            my $theirs = eval { decode_json($saved)->{access_token} } // '';
            return $theirs ne $self->access_token->{access_token} ? $saved : undef;
        });
}

# The application's view of a failed refresh (the module's error handler
# croaks): an OAuth 2.0 error answer ends the session unless it says the
# server is down; anything else (no JSON, no answer) is this call's error.
sub refused {
    my ($error) = @_;
    my ($code) = $error =~ /^OAuth2 error: (\w+)/;
    return { outcome => 'reauth_required', message => $error } if $code && $code !~ /^(temporarily_unavailable|server_error)$/;
    return { outcome => 'transport_error', message => $error };
}

sub work {
    my ($message) = @_;
    my $client = oauth2();
    if ($message->{op} eq 'login') {
        eval { $client->request_tokens(grant_type => 'password', username => $message->{username}, password => $message->{password}); 1 }
          or return { outcome => 'http_error', status => 400, message => "$@" };
        return { outcome => 'ok' };
    }
    my $url = $message->{url} // "$hello->{baseURL}$message->{path}";
    my $request = HTTP::Request->new($message->{method}, $url, [%{ $message->{headers} // {} }], $message->{body});
    my $response = eval { $client->request($request) } or return refused("$@");
    # LWP answers a connection failure with its own 500.
    return { outcome => 'transport_error', message => $response->status_line }
      if ($response->header('Client-Warning') // '') eq 'Internal response';
    return { outcome => $response->is_success ? 'ok' : 'http_error', status => $response->code, body => $response->decoded_content };
}

while (my $line = <STDIN>) {
    my $message = eval { decode_json($line) } or next;
    my ($id, $op) = ($message->{id}, $message->{op} // '');
    1 while waitpid(-1, POSIX::WNOHANG()) > 0;
    if ($op eq 'hello') {
        $hello = $message;
        send_line({ id => $id, ok => JSON::PP::true, driver => 'perl-lwp-authen-oauth2', version => "$LWP::Authen::OAuth2::VERSION (Debian)",
                    profiles => ['oauth2'], capabilities => ['url'] });
    } elsif ($op eq 'login' || $op eq 'request') {
        defined(my $pid = fork) or die "fork: $!";
        next if $pid;
        my $result = eval { work($message) } // { outcome => 'transport_error', message => "$@" };
        send_line({ id => $id, ok => ($result->{outcome} eq 'ok' ? JSON::PP::true : JSON::PP::false), %$result });
        POSIX::_exit(0);    # not exit: the worker must not remove the parent's temporary directory
    } elsif ($op eq 'shutdown') {
        1 while wait() != -1;
        send_line({ id => $id, ok => JSON::PP::true });
        last;
    } else {
        send_line({ id => $id, ok => JSON::PP::false, outcome => 'unsupported', message => "unknown op $op" });
    }
}

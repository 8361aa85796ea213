# The driver side of authmock's stdio protocol (version 1), for Perl drivers.
# Perl applications run concurrent calls as processes (a preforking server),
# so each `login` and `request` runs in a forked worker, which writes its one
# answer line under a lock; `shutdown` waits for every worker.
#
#   use AuthmockDriver;
#   my $driver = AuthmockDriver->new;    # a private directory for the app's files
#   $driver->serve('perl-x', $VERSION, sub { my ($message, $hello) = @_; ... return {outcome => 'ok'} });
#
# The work function gets the runner's message and the `hello` message, and
# returns an outcome hash (`outcome`, and `status`, `body`, `message`).
package AuthmockDriver;
use strict;
use warnings;
use Fcntl qw(:flock);
use File::Temp;
use JSON::PP;
use POSIX ();

my $json = JSON::PP->new->utf8->canonical;

sub new {
    my ($class) = @_;
    return bless { dir => File::Temp->newdir }, $class;
}

# A directory of the driver's own for the application's files (a token
# store), removed when the driver ends.
sub dir { "$_[0]{dir}" }

sub send_line {
    my ($self, $message) = @_;
    open my $lock, '>>', $self->dir . "/stdout.lock" or die "lock: $!";
    flock $lock, LOCK_EX;
    # The runner gone (its end of the pipe closed): leave quietly, as at the end of stdin.
    local $SIG{PIPE} = 'IGNORE';
    defined(syswrite STDOUT, $json->encode($message) . "\n") or POSIX::_exit(0);
    close $lock;
}

sub serve {
    my ($self, $name, $version, $work) = @_;
    my $hello;
    while (my $line = <STDIN>) {
        my $message = eval { decode_json($line) } or next;
        my ($id, $op) = ($message->{id}, $message->{op} // '');
        1 while waitpid(-1, POSIX::WNOHANG()) > 0;
        if ($op eq 'hello') {
            $hello = $message;
            $self->send_line({ id => $id, ok => JSON::PP::true, driver => $name, version => $version, profiles => ['oauth2'], capabilities => ['url'] });
        } elsif ($op eq 'login' || $op eq 'request') {
            defined(my $pid = fork) or die "fork: $!";
            next if $pid;
            my $result = eval { $work->($message, $hello) } // { outcome => 'transport_error', message => "$@" };
            $self->send_line({ id => $id, ok => ($result->{outcome} eq 'ok' ? JSON::PP::true : JSON::PP::false), %$result });
            POSIX::_exit(0);    # not exit: the worker must not remove the parent's temporary directory
        } elsif ($op eq 'shutdown') {
            1 while wait() != -1;
            $self->send_line({ id => $id, ok => JSON::PP::true });
            last;
        } else {
            $self->send_line({ id => $id, ok => JSON::PP::false, outcome => 'unsupported', message => "unknown op $op" });
        }
    }
}

# What an LWP response was to the application: LWP answers a connection
# failure with its own 500, which is no answer from the server.
sub lwp_outcome {
    my ($response) = @_;
    return { outcome => 'transport_error', message => $response->status_line }
      if ($response->header('Client-Warning') // '') eq 'Internal response';
    return { outcome => $response->is_success ? 'ok' : 'http_error', status => $response->code, body => $response->decoded_content };
}

1;
